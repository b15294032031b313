"""A key of some wings names an entity: the name resolves palace-wide (the same person named in
two wings is one entity), the mention keeps the spelling as written, but no alias is recorded:
an alias steers every wing's later sightings, which only a key of every wing may do (as
`POST /api/entities/{id}/aliases` and an import hold). Found by an agent's trial: "Zara
Quonsett" in wing alpha converged on beta's "Zara Quonset" and became its alias for every wing.
The answer tells such a key no more than the entity's detail would: not when the palace first
recorded it (another wing's fact)."""

from __future__ import annotations

import pytest

from api.mcp_server import writes
from api.models import AgentKey
from dedup import services
from palace.models import Entity, EntityAlias, Mention
from tests.api.conftest import castellan
from tests.api.mcp_support import ctx_of
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db
TYPO = "Zara Quonsett"  # one edit from beta's "Zara Quonset"


@pytest.fixture
def known(dedup_settings) -> Entity:
    """Zara Quonset, named in beta."""
    drawer = services.drawer_write_in(wing="beta", room="r", content="Zara Quonset called.").drawer
    return services.mention_add(drawer=drawer, name="Zara Quonset", kind="person").resolution.entity


def alpha_drawer(client) -> str:
    body = {"content": "Zara Quonsett asked for the report."}
    return client.post("/api/wings/alpha/rooms/r/drawers", body, format="json").json()["id"]


def mention(client, name: str = TYPO):
    drawer = alpha_drawer(client)
    body = {"name": name, "kind": "person"}
    return client.post(f"/api/drawers/{drawer}/mentions", body, format="json")


@pytest.fixture
def alpha():
    return agent_client("alpha", wings=["alpha"])


def test_the_name_still_resolves_palace_wide(known, alpha):
    body = mention(alpha).json()
    assert body["entity"]["id"] == str(known.uuid)
    assert body["resolution"]["rule"] == "typo"


def test_the_mention_keeps_the_spelling_as_written(known, alpha):
    mention(alpha)
    assert Mention.objects.get(drawer__room__wing__name="alpha").observation["name"] == TYPO


def test_a_key_of_some_wings_records_no_alias(known, alpha):
    mention(alpha)
    assert not EntityAlias.objects.exists()


def test_the_answer_lists_no_alias_it_did_not_record(known, alpha):
    assert mention(alpha).json()["entity"]["aliases"] == []


def test_a_key_of_every_wing_records_the_spelling(known):
    mention(agent_client("omega"))
    assert list(EntityAlias.objects.values_list("alias", flat=True)) == [TYPO]


def test_the_answer_does_not_say_when_the_palace_first_recorded_it(known, alpha):
    assert mention(alpha).json()["entity"]["created_at"] is None


def test_nor_does_the_entitys_detail(known, alpha):
    mention(alpha)
    assert alpha.get(f"/api/entities/{known.uuid}").json()["created_at"] is None


def test_a_key_of_every_wing_is_told(known):
    shown = agent_client("omega").get(f"/api/entities/{known.uuid}").json()
    assert shown["created_at"] == known.created_at.isoformat().replace("+00:00", "Z")


def test_over_mcp_a_key_of_some_wings_records_no_alias(known):
    _, secret = AgentKey.objects.issue(agent="alpha", wings=["alpha"], rights=["read", "write"])
    ctx = ctx_of(secret)
    drawer = writes.add_drawer(ctx, wing="alpha", room="r", content="Zara Quonsett asked.")
    answer = writes.record_mention(ctx, drawer_id=drawer["id"], name=TYPO, kind="person")
    assert answer["entity"]["id"] == str(known.uuid)
    assert not EntityAlias.objects.exists()


DRAWER_LINE = {"type": "drawer", "id": "x1", "content": "Zara asked.", "wing": "alpha", "room": "r"}


@pytest.mark.parametrize(
    "line",
    [
        {"type": "mention", "drawer": "x1", "name": TYPO, "kind": "person"},
        {"type": "entity", "name": TYPO, "kind": "person", "aliases": []},
    ],
    ids=["mention", "entity"],
)
def test_an_import_by_a_key_of_some_wings_records_no_alias(known, alpha, line):
    alpha.post("/api/imports", castellan(DRAWER_LINE, line), format="json")
    assert Entity.objects.count() == 1
    assert not EntityAlias.objects.exists()


def test_a_mention_whose_drawer_went_meanwhile_is_said_so(known, alpha, monkeypatch):
    """The entity is one the key is told of by this mention only: gone with its drawer, the
    answer says so rather than naming no entity."""
    real = services.mention_add

    def then_deleted(**kwargs):
        written = real(**kwargs)
        services.drawer_delete(drawer=kwargs["drawer"])
        return written

    monkeypatch.setattr(services, "mention_add", then_deleted)
    response = mention(alpha)
    assert response.status_code == 409
    assert response.json()["code"] == "drawer_deleted"


# What the answer says (its note and possibly_same_as) holds to the same rule ------------------


def test_the_note_of_a_key_of_some_wings_does_not_call_its_spelling_an_alias(known, alpha):
    note = mention(alpha).json()["note"]
    assert "one of its aliases" not in note
    assert "kept by the mention, not an alias" in note


def test_a_key_of_every_wing_is_told_its_spelling_became_an_alias(known):
    note = mention(agent_client("all")).json()["note"]
    assert "one of its aliases" in note


# "Katerino" is a new entity that merely resembles beta's "Katarina": linked possibly_same_as.
def katarina(dedup_settings) -> Entity:
    drawer = services.drawer_write_in(wing="beta", room="r", content="Katarina called.").drawer
    return services.mention_add(drawer=drawer, name="Katarina", kind="person").resolution.entity


def test_a_new_entity_resembling_one_only_other_wings_name_lists_no_link_to_it(
    alpha, dedup_settings
):
    katarina(dedup_settings)
    body = mention(alpha, "Katerino").json()
    assert body["entity_created"] is True
    assert body["possibly_same_as"] == []


def test_nor_does_its_note_name_that_entity(alpha, dedup_settings):
    katarina(dedup_settings)
    assert "Katarina" not in mention(alpha, "Katerino").json()["note"]


def test_a_key_that_is_told_of_the_entity_sees_the_link(dedup_settings):
    known = katarina(dedup_settings)
    both = agent_client("both", wings=["alpha", "beta"])
    body = mention(both, "Katerino").json()
    assert [link["entity"] for link in body["possibly_same_as"]] == [str(known.uuid)]
