"""Query parameters read as what they say, or refused: every parameter of the API takes one value
(a repeat was read as its last: `?wing=beta&wing=alpha` searched alpha, `?alias=a&alias=b`
removed b, where `dry_run` and `all` refused a repeat), an entity kind no write can store is no
filter, and a queue's `run` names a sweep there is (0 and 999999 listed nothing)."""

from __future__ import annotations

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from api.models import AgentKey
from dedup import services
from palace.models import EntityAlias
from review.services import sweeps
from tests.conftest import person_client

pytestmark = pytest.mark.django_db


def query_parameters() -> list[tuple[str, str, str]]:
    """Every (method, path, query parameter) the schema documents."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [
        (method, path, parameter["name"])
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "query"
    ]


def filled(path: str) -> str:
    """Any path: the repeat is refused before the route is looked at."""
    return path.replace("{wing}", "ops").replace("{room}", "dev").replace("{run_id}", "1")


@pytest.mark.parametrize(
    ("method", "path", "name"), query_parameters(), ids=lambda value: str(value)
)
def test_every_query_parameter_given_twice_is_refused(api, method, path, name):
    for id_name in ("drawer_id", "entity_id", "import_id", "item_id", "decision_id"):
        path = path.replace(f"{{{id_name}}}", "1")
    response = getattr(api, method)(f"{filled(path)}?{name}=1&{name}=2")
    assert response.status_code == 400
    assert response.json() == {
        "error": f"{name} must be given once.",
        "code": "invalid",
        "details": {"field": name, "value": ["1", "2"]},
    }


def test_a_search_naming_two_wings_is_refused_not_read_as_the_last(dedup_settings):
    _, secret = AgentKey.objects.issue(agent="scout", wings=["alpha"], rights=["read"])
    client = Client(HTTP_AUTHORIZATION=f"Token {secret}")
    response = client.get("/api/search?q=backups&wing=beta&wing=alpha")
    assert response.status_code == 400
    assert response.json()["details"]["field"] == "wing"


def test_an_alias_named_twice_takes_back_neither(api, dedup_settings):
    entity = services.entity_resolve(name="Katarina", kind="person").entity
    for alias in ("Kat", "Kate"):
        api.post(f"/api/entities/{entity.uuid}/aliases", {"alias": alias}, format="json")
    response = api.delete(f"/api/entities/{entity.uuid}/aliases?alias=Kat&alias=Kate")
    assert response.status_code == 400
    assert EntityAlias.objects.filter(entity=entity).count() == 2


@pytest.mark.parametrize("kind", ["Person Name", "person!", "x" * 33])
def test_an_entity_kind_no_write_takes_is_no_filter(api, dedup_settings, kind):
    response = api.get("/api/entities", {"kind": kind})
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert response.json()["details"] == {"field": "kind"}


def test_an_entity_kind_is_read_as_a_write_reads_it(api, dedup_settings):
    services.entity_resolve(name="Katarina", kind="person")
    page = api.get("/api/entities", {"kind": " Person "}).json()
    names = [entity["name"] for entity in page["results"]]
    assert names == ["Katarina"]
    assert api.get("/api/entities", {"kind": ""}).status_code == 200


@pytest.fixture
def run(curator, dedup_settings):
    return sweeps.execute(sweeps.start(threshold=0.9, actor=curator))


@pytest.mark.parametrize(
    ("value", "status", "code"),
    [("0", 400, "invalid_id"), ("abc", 400, "invalid_id"), ("999999", 404, "sweep_not_found")],
)
def test_a_queue_s_run_is_a_sweep_there_is(curator, run, value, status, code):
    response = person_client(curator).get("/api/review/queue", {"run": value})
    assert response.status_code == status
    assert response.json()["code"] == code


def test_a_queue_of_a_sweep_there_is_is_listed(curator, run):
    response = person_client(curator).get("/api/review/queue", {"run": str(run.pk)})
    assert response.status_code == 200


@pytest.mark.parametrize(("value", "status"), [("0", 400), ("999999", 404)])
def test_the_console_says_so_too(curator, run, value, status):
    client = Client()
    client.force_login(curator)
    response = client.get("/", {"run": value})
    assert response.status_code == status
    assert "“Sweep proposals”" in response.content.decode()
