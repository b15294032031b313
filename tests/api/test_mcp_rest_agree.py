"""The same operation answers the same over MCP and REST: a dry run's similar drawers, a search
in a wing out of the key's reach (whether that wing exists or not), an empty cursor, and a name
given empty."""

from __future__ import annotations

import json
from typing import Any

import pytest

from api.mcp_server import reads, writes
from api.models import AgentKey
from dedup import services
from palace.models import Drawer
from tests.api.conftest import rest_of
from tests.api.mcp_support import ctx_of

pytestmark = pytest.mark.django_db

MEMORY = "The nightly backup copies the object store to the second region at two."


@pytest.fixture
def secret(dedup_settings) -> str:
    services.drawer_write_in(wing="alpha", room="ops", content=MEMORY, agent="agent-a")
    services.drawer_write_in(wing="beta", room="ops", content=MEMORY, agent="agent-b")
    _, secret = AgentKey.objects.issue(agent="agent-a", wings=("alpha",), rights=("read", "write"))
    return secret


def refusal(answer: Any) -> dict[str, Any]:
    assert answer.is_error, answer
    return json.loads(answer.content[0].text)


def test_check_duplicate_answers_as_the_rest_dry_run(secret) -> None:
    near = MEMORY.replace("two", "tw0")
    mcp = writes.check_duplicate(ctx_of(secret), wing="alpha", room="ops", content=near)
    answer = rest_of(secret).post(
        "/api/wings/alpha/rooms/ops/drawers?dry_run=true", {"content": near}, format="json"
    )
    assert answer.status_code == 200
    assert mcp == answer.json()
    (similar,) = mcp["similar"]
    assert set(similar) == {"drawer", "kind", "similarity", "signals"}
    assert similar["kind"] == "near"
    written = writes.add_drawer(ctx_of(secret), wing="alpha", room="ops", content=near)
    (linked,) = written["similar"]
    assert {key: linked[key] for key in similar} == similar


@pytest.mark.parametrize("wing", ["beta", "no-such-wing"])
def test_a_search_in_a_wing_out_of_reach_is_not_found_whether_it_exists_or_not(
    secret, wing
) -> None:
    mcp = refusal(reads.search(ctx_of(secret), query="backup", wing=wing))
    answer = rest_of(secret).get("/api/search", {"q": "backup", "wing": wing})
    assert (answer.status_code, answer.json()) == (404, mcp)
    assert mcp["code"] == "wing_not_found"


def test_an_empty_cursor_is_the_first_page(secret) -> None:
    found = reads.search(ctx_of(secret), query="backup", cursor="")
    assert len(found["drawers"]) == 1
    listed = reads.list_drawers(ctx_of(secret), wing="alpha", room="ops", cursor="")
    assert len(listed["drawers"]) == 1
    answer = rest_of(secret).get("/api/search", {"q": "backup", "cursor": ""})
    assert [hit["drawer"]["id"] for hit in answer.json()["results"]] == [
        drawer["id"] for drawer in found["drawers"]
    ]


def test_empty_search_filters_are_left_out_as_rest_leaves_them(secret) -> None:
    found = reads.search(ctx_of(secret), query="backup", wing="", room="", agent="")
    answer = rest_of(secret).get(
        "/api/search", {"q": "backup", "wing": "", "room": "", "agent": ""}
    )
    assert answer.status_code == 200
    assert len(found["drawers"]) == len(answer.json()["results"]) == 1


@pytest.mark.parametrize("name", ["", "   "])
@pytest.mark.parametrize("field", ["name", "kind"])
def test_a_name_or_kind_given_empty_is_refused_as_a_blank_one(secret, field, name) -> None:
    before = Drawer.objects.count()
    mcp = refusal(
        writes.add_drawer(ctx_of(secret), wing="alpha", room="ops", content="New.", **{field: name})
    )
    answer = rest_of(secret).post(
        "/api/wings/alpha/rooms/ops/drawers", {"content": "New.", field: name}, format="json"
    )
    assert (answer.status_code, answer.json()) == (400, mcp)
    assert (mcp["code"], mcp["details"]["field"]) == ("empty_label", field)
    assert Drawer.objects.count() == before


@pytest.mark.parametrize("name", ["", "   "])
def test_a_checkpoint_item_given_an_empty_name_is_refused_naming_the_item(secret, name) -> None:
    items = [
        {"content": "One.", "destination": "project", "wing": "alpha"},
        {"content": "Two.", "destination": "project", "wing": "alpha", "name": name},
    ]
    body = refusal(writes.write_checkpoint(ctx_of(secret), id="c1", items=items))
    assert body["code"] == "empty_label"
    assert body["details"] == {"field": "name", "item": 1}


def test_a_mention_given_an_empty_kind_is_refused(secret) -> None:
    drawer = Drawer.objects.get(room__wing__name="alpha")
    body = refusal(
        writes.record_mention(ctx_of(secret), drawer_id=str(drawer.uuid), name="Ada", kind="")
    )
    assert (body["code"], body["details"]) == ("empty_label", {"field": "kind"})
