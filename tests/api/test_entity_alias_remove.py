"""An alias recorded through the API can be taken back through it (audited), by a key that
reaches every wing, as an alias steers sightings in every wing; a curator's alias is taken back
by reverting its decision."""

import pytest

from dedup import services
from dedup.errors import Conflict
from palace.models import AuditEntry, EntityAlias
from tests.api.test_entities import drawer, mention  # noqa: F401
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def castle(api, drawer):  # noqa: F811
    drawer_id = drawer()
    entity_id = mention(api, drawer_id, "MemCastle", "tool").json()["entity"]["id"]
    api.post(f"/api/entities/{entity_id}/aliases", {"alias": "the castle"}, format="json")
    return entity_id, drawer_id


def test_an_api_alias_is_taken_back_and_audited(api, castle, user):
    entity_id, drawer_id = castle
    response = api.delete(f"/api/entities/{entity_id}/aliases?alias=the castle")
    assert response.status_code == 200
    assert response.json()["removed"] is True
    assert response.json()["aliases"] == []
    entry = AuditEntry.objects.get(action="entity.alias_remove")
    assert (entry.actor, entry.before, entry.after) == (
        user,
        {"aliases": ["the castle"]},
        {"aliases": []},
    )
    later = mention(api, drawer_id, "The Castle", "tool").json()
    assert later["entity"]["id"] != entity_id


def test_an_alias_not_held_changes_nothing(api, castle):
    entity_id, _ = castle
    rows = AuditEntry.objects.count()
    response = api.delete(f"/api/entities/{entity_id}/aliases?alias=the keep")
    assert response.status_code == 200
    assert response.json()["removed"] is False
    assert AuditEntry.objects.count() == rows


def test_a_curators_alias_is_refused_naming_the_way_back(api, castle):
    entity_id, _ = castle
    EntityAlias.objects.filter(alias="the castle").update(source=EntityAlias.Source.CURATOR)
    response = api.delete(f"/api/entities/{entity_id}/aliases?alias=the castle")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "alias_not_removable"
    assert "revert the curator's add_alias decision" in body["error"]
    assert EntityAlias.objects.filter(alias="the castle").exists()


@pytest.mark.parametrize(("query", "code"), [("", "invalid"), ("?alias=%20", "empty_label")])
def test_a_missing_or_blank_alias_is_refused(api, castle, query, code):
    entity_id, _ = castle
    response = api.delete(f"/api/entities/{entity_id}/aliases{query}")
    assert (response.status_code, response.json()["code"]) == (400, code)
    assert EntityAlias.objects.filter(alias="the castle").exists()


@pytest.mark.parametrize("method", ["post", "delete"])
def test_a_key_reaching_some_wings_may_not_change_aliases(castle, method):
    entity_id, _ = castle
    client = agent_client("scout", wings=["w"])
    url = f"/api/entities/{entity_id}/aliases"
    response = (
        client.post(url, {"alias": "the keep"}, format="json")
        if method == "post"
        else client.delete(f"{url}?alias=the castle")
    )
    assert (response.status_code, response.json()["code"]) == (403, "out_of_scope")
    assert list(EntityAlias.objects.values_list("alias", flat=True)) == ["the castle"]


def test_the_service_refuses_a_convergences_alias(dedup_settings):
    entity = services.entity_resolve(name="SurrealDB", kind="tool").entity
    EntityAlias.objects.create(entity=entity, alias="Surreal", key="surreal")
    with pytest.raises(Conflict) as refused:
        services.entity_alias_remove(entity=entity, alias="Surreal")
    assert refused.value.code == "alias_not_removable"


def test_an_alias_taken_back_by_a_look_alike_spelling_leaves_the_audit_without_it():
    """Recorded without its invisible character, it is taken back by the spelling it was given
    with; the audit's `after` listed it still (it compared the given spelling)."""
    entity = services.entity_resolve(name="Ada Lovelace", kind="person").entity
    services.entity_alias_add(entity=entity, alias="Countess Lovelace")
    services.entity_alias_add(entity=entity, alias="Enchantress of Numbers")
    _, removed = services.entity_alias_remove(entity=entity, alias="Countess\u2066 Lovelace")
    assert removed is True
    entry = AuditEntry.objects.get(action="entity.alias_remove")
    assert entry.before == {"aliases": ["Countess Lovelace", "Enchantress of Numbers"]}
    assert entry.after == {"aliases": ["Enchantress of Numbers"]}
    assert entry.data == {"alias": "Countess Lovelace"}
