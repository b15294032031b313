"""What a key of some wings is told of the entities: one it sees only if the entity has a mention
in a wing it reaches; any other is absent, as if it did not exist: left out of the list and of the candidates, 404 entity_not_found
for its detail, mentions and candidates. A key of every wing sees every entity (found by an
agent's trial in production: a key of one wing listed every entity of every wing)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dedup import services
from palace.models import Entity, EntityLink
from review import services as review
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db


def named(wing: str, name: str, kind: str = "person", content: str = "") -> Entity:
    """An entity named by a drawer in `wing`."""
    drawer = services.drawer_write_in(
        wing=wing, room="r", content=content or f"A note in {wing} naming {name}."
    ).drawer
    return services.mention_add(drawer=drawer, name=name, kind=kind).resolution.entity


@pytest.fixture
def alpha(dedup_settings):
    return agent_client("alpha", wings=["alpha"])


def listed(client, **query) -> list[str]:
    return [e["name"] for e in client.get("/api/entities", query).json()["results"]]


def test_the_list_leaves_out_an_entity_named_in_other_wings_only(alpha):
    named("alpha", "Ada Lovelace")
    named("beta", "Zara Quonset")
    assert listed(alpha) == ["Ada Lovelace"]


def test_a_name_search_finds_no_entity_named_in_other_wings_only(alpha):
    named("beta", "Zara Quonset")
    assert listed(alpha, name="Zara") == []


def test_an_entity_named_in_both_wings_is_listed(alpha):
    named("beta", "Zara Quonset")
    named("alpha", "Zara Quonset")
    assert listed(alpha) == ["Zara Quonset"]


def test_an_entity_named_nowhere_is_seen_by_a_key_of_every_wing_only(alpha):
    services.entity_resolve(name="Nobody Yet", kind="person")
    assert listed(alpha) == []
    assert listed(agent_client("omega")) == ["Nobody Yet"]


@pytest.mark.parametrize("suffix", ["", "/mentions", "/candidates"])
def test_an_entity_named_in_other_wings_only_is_not_found(alpha, suffix):
    entity = named("beta", "Zara Quonset")
    response = alpha.get(f"/api/entities/{entity.uuid}{suffix}")
    assert response.status_code == 404
    assert response.json()["code"] == "entity_not_found"


@pytest.mark.parametrize("suffix", ["", "/mentions", "/candidates"])
def test_a_key_of_every_wing_reads_it(dedup_settings, suffix):
    entity = named("beta", "Zara Quonset")
    assert agent_client("omega").get(f"/api/entities/{entity.uuid}{suffix}").status_code == 200


@pytest.fixture
def resembling(dedup_settings) -> tuple[Entity, Entity]:
    """Katarina named in beta, Katerina (two edits away: possibly_same_as) in alpha."""
    older = named("beta", "Katarina Volkova")
    newer = named("alpha", "Katerino Volkova")
    assert EntityLink.objects.filter(newer=newer, older=older).exists()
    return older, newer


def test_a_candidate_named_in_other_wings_only_is_left_out(alpha, resembling):
    _, newer = resembling
    body = alpha.get(f"/api/entities/{newer.uuid}/candidates").json()
    assert body["candidates"] == []


def test_a_key_of_every_wing_sees_the_candidate(resembling):
    older, newer = resembling
    body = agent_client("omega").get(f"/api/entities/{newer.uuid}/candidates").json()
    assert [c["entity"]["id"] for c in body["candidates"]] == [str(older.uuid)]


@pytest.fixture
def settled(resembling, curator) -> tuple[Entity, Entity]:
    """A curator aliased Katerino (named in alpha) into Katarina (named in beta only)."""
    older, newer = resembling
    link = EntityLink.objects.get(newer=newer, older=older)
    review.decide(item=f"e{link.pk}", action="add_alias", actor=curator, canonical=str(older.uuid))
    return older, newer


def test_the_entity_it_was_settled_into_is_not_shown(alpha, settled):
    older, newer = settled
    assert alpha.get(f"/api/entities/{newer.uuid}").json()["redirect_to"] is None
    assert alpha.get(f"/api/entities/{older.uuid}").status_code == 404


def test_it_is_shown_once_a_drawer_of_the_wing_names_it(alpha, settled):
    older, newer = settled
    named("alpha", "Katarina Volkova", content="Katarina Volkova again.")
    assert alpha.get(f"/api/entities/{newer.uuid}").json()["redirect_to"] == str(older.uuid)


def test_a_key_of_every_wing_is_shown_the_pointer(settled):
    older, newer = settled
    shown = agent_client("omega").get(f"/api/entities/{newer.uuid}").json()
    assert shown["redirect_to"] == str(older.uuid)


def test_the_list_reads_the_same_queries_whatever_its_length(alpha):
    named("alpha", "Ada Lovelace")
    alpha.get("/api/entities")  # the key's first use is recorded once
    with CaptureQueriesContext(connection) as one:
        alpha.get("/api/entities")
    for n, name in enumerate(["Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov"]):
        named("alpha" if n % 2 else "beta", name)
    with CaptureQueriesContext(connection) as five:
        assert len(alpha.get("/api/entities").json()["results"]) == 3
    assert len(five) == len(one)
