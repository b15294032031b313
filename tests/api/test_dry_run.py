"""The write path's dry run over REST: `POST .../drawers?dry_run=true` answers the verdict and
evidence a write would get, and writes nothing, not even a wing or a room."""

import uuid

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.conftest import agent_client

pytestmark = pytest.mark.django_db

TEXT = "The deploy script must run database migrations before restarting the web workers."
TYPO = "The deploy script must run database migrations before restartng the web workers."
URL = "/api/wings/ops/rooms/runbooks/drawers"
DRY_URL = f"{URL}?dry_run=true"


def row_counts() -> dict[str, int]:
    """Rows in every table of the project's apps (and the auth tables a request could touch)."""
    return {
        model._meta.label: model.objects.count()
        for app in ("palace", "dedup", "review", "api", "auth")
        for model in apps.get_app_config(app).get_models()
    }


def check(api, content=TEXT, url=DRY_URL, **fields):
    return api.post(url, {"content": content, **fields}, format="json")


@pytest.fixture
def original(api):
    return api.post(URL, {"content": TEXT}, format="json").json()


def test_an_exact_copy_would_return_the_existing_drawer(api, original):
    before = row_counts()
    response = check(api)
    assert response.status_code == 200
    body = response.json()
    assert body["would_store"] is False
    assert body["existing"]["id"] == original["id"]
    assert body["similar"] == []
    assert row_counts() == before


def test_a_typo_would_be_stored_and_linked_with_its_evidence(api, original):
    before = row_counts()
    body = check(api, TYPO).json()
    assert body["would_store"] is True
    assert body["existing"] is None
    [similar] = body["similar"]
    assert similar["drawer"] == original["id"]
    assert similar["kind"] == "near"
    assert similar["similarity"] > 0.9
    assert similar["signals"]["similarity"] == similar["similarity"]
    assert row_counts() == before


def test_the_dry_run_agrees_with_the_write(api, original):
    dry = check(api, TYPO).json()
    written = api.post(URL, {"content": TYPO}, format="json").json()
    assert [s["drawer"] for s in dry["similar"]] == [s["drawer"] for s in written["similar"]]
    assert [s["kind"] for s in dry["similar"]] == [s["kind"] for s in written["similar"]]


def test_a_new_wing_and_room_are_not_created(api):
    before = row_counts()
    response = check(api, url="/api/wings/new-wing/rooms/new-room/drawers?dry_run=true")
    assert response.status_code == 200
    assert response.json() == {"would_store": True, "existing": None, "similar": []}
    assert row_counts() == before


def test_a_replayed_id_would_return_its_drawer(api):
    drawer_id = str(uuid.uuid4())
    api.post(URL, {"content": TEXT, "id": drawer_id}, format="json")
    body = check(api, TEXT, id=drawer_id).json()
    assert body["would_store"] is False
    assert body["existing"]["id"] == drawer_id


def test_an_id_replayed_with_other_content_would_be_refused(api):
    drawer_id = str(uuid.uuid4())
    api.post(URL, {"content": TEXT, "id": drawer_id}, format="json")
    response = check(api, "Other text entirely, written again under the same id.", id=drawer_id)
    assert response.status_code == 409
    assert response.json()["code"] == "drawer_id_taken"


@pytest.mark.parametrize("value", ["false", "0", "no"])
def test_a_false_dry_run_writes(api, value):
    response = check(api, url=f"{URL}?dry_run={value}")
    assert response.status_code == 201
    assert response.json()["created"] is True


@pytest.mark.parametrize("value", ["maybe", "", "2", "truee"])
def test_a_bad_dry_run_value_is_refused_and_writes_nothing(api, value):
    before = row_counts()
    response = check(api, url=f"{URL}?dry_run={value}")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert row_counts() == before


@pytest.mark.parametrize("query", ["dry_run=true&dry_run=false", "dry_run=false&dry_run=true"])
def test_a_dry_run_given_twice_is_refused_and_writes_nothing(api, query):
    """A proxy or client reading the first value would believe nothing was written."""
    before = row_counts()
    response = check(api, url=f"{URL}?{query}")
    assert response.status_code == 400
    assert response.json()["details"]["field"] == "dry_run"
    assert row_counts() == before


def test_the_dry_run_refuses_what_the_write_refuses(api, original):
    api.post(URL, {"content": "Named one.", "name": "runbook"}, format="json")
    before = row_counts()
    taken = check(api, "Other content.", name="runbook")
    assert taken.status_code == 409
    assert taken.json()["code"] == "drawer_name_taken"
    blank = check(api, "   ")
    assert blank.status_code == 400
    assert blank.json()["code"] == "invalid"
    assert row_counts() == before


def test_a_key_out_of_the_wing_is_refused(user, dedup_settings):
    scoped = agent_client(user.username, wings=("elsewhere",))
    before = row_counts()
    response = check(scoped)
    assert response.status_code == 403
    assert response.json()["code"] == "out_of_scope"
    assert row_counts() == before


def test_the_dry_run_is_in_the_schema(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    post = schema["paths"]["/api/wings/{wing}/rooms/{room}/drawers"]["post"]
    assert "dry_run" in [parameter["name"] for parameter in post["parameters"]]
    assert "DrawerCheck" in str(post["responses"]["200"])


def count_queries(api, content) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = check(api, content)
    assert response.status_code == 200
    return len(captured)


def test_the_number_of_queries_does_not_grow_with_the_evidence(api, original):
    one = count_queries(api, TYPO)
    for n in range(4):
        api.post(URL, {"content": TEXT.replace("web", f"web{n}")}, format="json")
    assert len(check(api, TYPO).json()["similar"]) == 5
    assert count_queries(api, TYPO) == one


def test_an_exact_copy_takes_a_constant_number_of_queries(api, original):
    one = count_queries(api, TEXT)
    for n in range(4):
        api.post(URL, {"content": TEXT.replace("web", f"web{n}")}, format="json")
    assert count_queries(api, TEXT) == one
