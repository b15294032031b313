"""Query parameters read as what they say, or refused: every parameter of the API takes one value
(a repeat was read as its last: `?wing=beta&wing=alpha` searched alpha, `?alias=a&alias=b`
removed b, where `dry_run` and `all` refused a repeat)."""

from __future__ import annotations

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from api.models import AgentKey
from dedup import services
from palace.models import EntityAlias

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
