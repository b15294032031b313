import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_openapi_schema_is_served(api):
    response = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in [
        "/api/wings/{wing}/rooms/{room}/drawers",
        "/api/drawers/{drawer_id}/duplicates",
        "/api/diary",
        "/api/checkpoints",
        "/api/entities/{entity_id}/candidates",
        "/api/entities/{entity_id}/aliases",
    ]:
        assert path in paths


def schema(api) -> dict:
    return api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()


def test_a_decisions_not_restored_may_hold_a_sweeps_objects(api):
    """A sweep's reverse lists its merges undone in part as objects, in the same list."""
    items = schema(api)["components"]["schemas"]["Decision"]["properties"]["not_restored"]["items"]
    assert items.get("type") != "string"


@pytest.mark.parametrize("status", ["414", "431"])
def test_every_operation_documents_the_servers_refusals(api, status):
    """gunicorn answers a request line or headers too long before the application does."""
    operations = [op for ops in schema(api)["paths"].values() for op in ops.values()]
    assert all(status in op["responses"] for op in operations)


def test_swagger_ui_is_served_locally(admin_client):
    response = admin_client.get("/api/docs/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in page
    # Every address the page loads from or links to (not its random CSRF token, which may spell
    # "cdn" by chance) is one of the app's own.
    addresses = re.findall(r"""(?:src|href|url)\s*[=:]\s*["']([^"']*)""", page, re.IGNORECASE)
    assert addresses
    assert not [a for a in addresses if "cdn" in a.lower() or not a.startswith("/")]
    assert "https://" not in page
    assert "//cdn" not in page.lower()


def test_swagger_assets_exist_in_static_files():
    from django.contrib.staticfiles import finders

    assert finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")


def write(api, n, room="entries"):
    return api.post(
        f"/api/wings/w/rooms/{room}/drawers",
        {"content": f"Memory number {n} about the migration of the billing service."},
        format="json",
    ).json()


def count_queries(django_assert_max_num_queries, call):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        response = call()
    assert response.status_code == 200
    return len(captured)


@pytest.mark.parametrize(
    "endpoint",
    ["list", "duplicates", "entities", "mentions", "candidates", "wings"],
)
def test_no_n_plus_one(api, django_assert_max_num_queries, endpoint):
    """The same number of queries for one row as for many."""

    def populate(n):
        ids = [write(api, i) for i in range(n)]
        first = ids[0]["id"]
        # Two edits apart, the first two are linked; the others link to several.
        names = ["Katarina", "Katerino", "Katerina", "Kathrina", "Katrina"][: max(2, n // 3)]
        entity = None
        for i, name in enumerate(names):
            body = api.post(
                f"/api/drawers/{ids[i % len(ids)]['id']}/mentions",
                {"name": name, "kind": "person"},
                format="json",
            ).json()
            entity = entity or body["entity"]["id"]
            api.post(
                f"/api/entities/{body['entity']['id']}/aliases",
                {"alias": f"{name} alias"},
                format="json",
            )
        return first, entity

    calls = {
        "list": lambda first, entity: api.get("/api/wings/w/rooms/entries/drawers"),
        "duplicates": lambda first, entity: api.get(f"/api/drawers/{first}/duplicates"),
        "entities": lambda first, entity: api.get("/api/entities"),
        "mentions": lambda first, entity: api.get(f"/api/entities/{entity}/mentions"),
        "candidates": lambda first, entity: api.get(f"/api/entities/{entity}/candidates"),
        "wings": lambda first, entity: api.get("/api/wings"),
    }
    first, entity = populate(2)
    few = count_queries(django_assert_max_num_queries, lambda: calls[endpoint](first, entity))
    first, entity = populate(15)
    many = count_queries(django_assert_max_num_queries, lambda: calls[endpoint](first, entity))
    assert many == few


def test_a_write_costs_the_same_queries_whatever_it_links_to(api):
    """A write linked to one drawer and one linked to five answer with as many queries."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def linked_write(room, copies):
        ids = {
            api.post(
                f"/api/wings/w/rooms/{room}/drawers",
                {"content": f"The billing service migrates on Friday, step {n}."},
                format="json",
            ).json()["id"]
            for n in range(copies)
        }
        with CaptureQueriesContext(connection) as captured:
            response = api.post(
                f"/api/wings/w/rooms/{room}/drawers",
                {"content": "The billing service migrates on Friday, step 9!"},
                format="json",
            )
        assert response.status_code == 201
        assert {similar["drawer"] for similar in response.json()["similar"]} == ids
        return len(captured)

    assert linked_write("one", 1) == linked_write("five", 5)


def test_root_redirects_somewhere_useful():
    response = Client().get("/")
    assert response.status_code == 302
