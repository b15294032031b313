"""A mention's answer says what happened, over REST and MCP alike: the possibly_same_as links a
new entity was given, and, when the drawer mentioned the entity already, that the stored
observation is the first sighting's while this spelling joined the entity's aliases."""

from __future__ import annotations

from typing import Any

import pytest

from api.mcp_server import writes
from dedup import services
from palace.models import EntityLink
from tests.api.conftest import rest_of
from tests.api.mcp_support import ctx_of

pytestmark = pytest.mark.django_db

MEMORY = "We chose SurrealDB for the graph of customers and their invoices."


@pytest.fixture
def drawer(dedup_settings) -> str:
    written = services.drawer_write_in(wing="alpha", room="ops", content=MEMORY, agent="a")
    return str(written.drawer.uuid)


def over_mcp(secret: str, drawer: str, name: str, kind: str) -> dict[str, Any]:
    return writes.record_mention(ctx_of(secret), drawer_id=drawer, name=name, kind=kind)


def over_rest(secret: str, drawer: str, name: str, kind: str) -> dict[str, Any]:
    answer = rest_of(secret).post(
        f"/api/drawers/{drawer}/mentions", {"name": name, "kind": kind}, format="json"
    )
    assert answer.status_code in (200, 201)
    return answer.json()


RECORD = {"mcp": over_mcp, "rest": over_rest}


@pytest.mark.parametrize("via", sorted(RECORD))
def test_a_new_entity_says_the_entities_it_was_linked_to(secret, drawer, via) -> None:
    katarina = services.entity_resolve(name="Katarina", kind="person").entity
    answer = RECORD[via](secret, drawer, "Katerino", "person")
    assert answer["entity_created"] is True
    assert answer["resolution"]["rule"] == "distinct"
    (link,) = EntityLink.objects.filter(older=katarina)
    assert answer["possibly_same_as"] == [
        {
            "entity": str(katarina.uuid),
            "name": "Katarina",
            "kind": "person",
            "similarity": link.similarity,
        }
    ]
    assert "possibly_same_as 'Katarina'" in answer["note"]


@pytest.mark.parametrize("via", sorted(RECORD))
def test_a_second_spelling_in_one_drawer_says_the_mention_was_there(secret, drawer, via) -> None:
    first = RECORD[via](secret, drawer, "SurrealDB", "tool")
    assert (first["created"], first["possibly_same_as"]) == (True, [])
    assert (
        first["note"] == "New entity 'SurrealDB' (tool); this drawer's mention of it is recorded."
    )
    second = RECORD[via](secret, drawer, "SurealDB", "tool")
    assert second["created"] is False
    assert second["resolution"]["name"] == "SurealDB"
    assert second["resolution"]["rule"] == "typo"
    assert second["observation"]["name"] == "SurrealDB"  # the first sighting's, stored
    assert second["entity"]["aliases"] == ["SurealDB"]
    assert second["note"].startswith(
        "This drawer already mentioned entity 'SurrealDB' (first as 'SurrealDB'"
    )
    assert "'SurealDB' resolved to entity 'SurrealDB' (tool) by rule typo" in second["note"]
    assert "one of its aliases" in second["note"]


def test_rest_and_mcp_answer_a_mention_alike(secret, drawer) -> None:
    rest = over_rest(secret, drawer, "Grace Hopper", "person")
    other = services.drawer_write_in(wing="alpha", room="ops", content="Grace wrote it.", agent="a")
    mcp = over_mcp(secret, str(other.drawer.uuid), "Grace Hopper", "person")
    assert set(rest) == set(mcp)
    assert set(rest["resolution"]) == set(mcp["resolution"]) == {"name", "rule", "confidence"}
