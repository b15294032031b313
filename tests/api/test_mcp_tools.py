"""The MCP tools in-process, on the test database (both backends): each tool holds a key to the
same rights and wings as the REST route, and a refusal is the REST error body, writing nothing.
The SDK's client over both transports is in test_mcp.py."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from api.mcp_server import reads, resources, writes
from api.models import AgentKey
from palace.models import Drawer, Mention, Wing
from tests.api.mcp_support import ctx_of, refusal

pytestmark = pytest.mark.django_db

MEMORY = "The nightly backup copies the object store to the second region at two."


def context(
    wings: tuple[str, ...] = ("alpha",), rights: tuple[str, ...] = ("read", "write")
) -> Any:
    """What a tool reads of its MCP context: the request's headers (HTTP)."""
    _, secret = AgentKey.objects.issue(agent="agent-a", wings=wings, rights=rights)
    return ctx_of(secret)


def test_a_write_is_filed_as_the_keys_agent_with_mcp_provenance(dedup_settings) -> None:
    written = writes.add_drawer(context(), wing="alpha", room="ops", content=MEMORY)
    drawer = Drawer.objects.get(uuid=written["id"])
    assert drawer.agent == "agent-a"
    assert drawer.source == {"via": "mcp", "user": "agent-a"}


def test_a_key_without_the_write_right_writes_nothing(dedup_settings) -> None:
    answer = writes.add_drawer(context(rights=("read",)), wing="alpha", room="ops", content=MEMORY)
    assert refusal(answer)["code"] == "permission_denied"
    assert Drawer.objects.count() == 0
    assert Wing.objects.count() == 0


def test_a_wing_out_of_reach_is_not_found_for_a_read(dedup_settings) -> None:
    writes.add_drawer(context(wings=("beta",)), wing="beta", room="ops", content=MEMORY)
    answer = reads.list_drawers(context(), wing="beta", room="ops")
    assert refusal(answer)["code"] == "wing_not_found"


def test_search_sees_only_the_keys_wings(dedup_settings) -> None:
    writes.add_drawer(context(wings=("*",)), wing="beta", room="ops", content=MEMORY)
    mine = writes.add_drawer(context(), wing="alpha", room="ops", content=MEMORY)
    found = reads.search(context(), query="nightly BACKUP")
    assert [drawer["id"] for drawer in found["drawers"]] == [mine["id"]]


def test_invalid_content_is_the_apis_invalid(dedup_settings) -> None:
    answer = writes.add_drawer(context(), wing="alpha", room="ops", content="a\x00b")
    assert refusal(answer)["code"] == "invalid"
    assert Drawer.objects.count() == 0


def test_a_malformed_drawer_id_is_invalid_id(dedup_settings) -> None:
    assert refusal(reads.list_duplicates(context(), drawer_id="nope"))["code"] == "invalid_id"


def test_no_key_is_not_authenticated(dedup_settings, monkeypatch) -> None:
    monkeypatch.delenv("CASTELLAN_API_KEY", raising=False)
    answer = reads.list_wings(SimpleNamespace(headers=None))
    assert refusal(answer)["code"] == "not_authenticated"


def test_stdio_takes_the_key_from_the_environment(dedup_settings, monkeypatch) -> None:
    _, secret = AgentKey.objects.issue(agent="agent-a", wings=["alpha"], rights=["read"])
    monkeypatch.setenv("CASTELLAN_API_KEY", secret)
    assert reads.list_wings(SimpleNamespace(headers=None)) == {
        "wings": [{"name": "alpha", "rooms": []}],
        "every_wing": False,
    }


def test_supersede_needs_the_delete_right(dedup_settings) -> None:
    written = writes.add_drawer(context(), wing="alpha", room="ops", content=MEMORY)
    answer = writes.supersede_drawer(context(), drawer_id=written["id"])
    assert refusal(answer)["code"] == "permission_denied"
    assert Drawer.objects.get(uuid=written["id"]).valid_to is None


def test_supersede_with_the_delete_right(dedup_settings) -> None:
    written = writes.add_drawer(context(), wing="alpha", room="ops", content=MEMORY)
    ended = writes.supersede_drawer(
        context(rights=("read", "write", "delete")), drawer_id=written["id"]
    )
    assert ended["is_current"] is False


def test_diary_checkpoint_and_mention(dedup_settings) -> None:
    ctx = context(wings=("*",))
    entry = writes.write_diary(ctx, wing="alpha", content="Finished the backup runbook today.")
    assert entry["room"] == "diary"
    batch = writes.write_checkpoint(
        ctx, id="session-1", items=[{"content": MEMORY, "destination": "project"}]
    )
    assert batch["stored"] == 1
    again = writes.write_checkpoint(
        ctx, id="session-1", items=[{"content": MEMORY, "destination": "project"}]
    )
    assert again["replayed"] is True
    mention = writes.record_mention(ctx, drawer_id=entry["id"], name="Backup Runbook")
    assert mention["created"] is True
    assert Mention.objects.count() == 1


def test_the_wings_resource_shows_only_the_keys_wings(dedup_settings) -> None:
    writes.add_drawer(context(wings=("*",)), wing="beta", room="ops", content=MEMORY)
    writes.add_drawer(context(), wing="alpha", room="ops", content=MEMORY)
    wings = json.loads(resources.wings(context()))
    assert [wing["name"] for wing in wings["wings"]] == ["alpha"]
    assert wings == reads.list_wings(context())  # the tool's answer


def test_the_rooms_resource_refuses_a_wing_out_of_reach(dedup_settings) -> None:
    writes.add_drawer(context(wings=("*",)), wing="beta", room="ops", content=MEMORY)
    with pytest.raises(MCPError) as refused:
        resources.rooms("beta", context())
    assert refused.value.data == {"error": "No wing with that name.", "code": "wing_not_found"}


def test_the_rooms_resource_counts_current_drawers(dedup_settings) -> None:
    writes.add_drawer(context(), wing="alpha", room="ops", content=MEMORY)
    alpha = json.loads(resources.rooms("alpha", context()))
    assert alpha == reads.list_rooms(context(), wing="alpha")


# Paging: an agent reads past the first page -----------------------------------------------------


def test_list_drawers_pages_through_a_room_with_its_cursor(dedup_settings) -> None:
    ctx = context()
    for n in range(5):
        writes.add_drawer(ctx, wing="alpha", room="ops", content=f"Runbook step {n} of the plan.")
    first = reads.list_drawers(ctx, wing="alpha", room="ops", limit=2)
    second = reads.list_drawers(ctx, wing="alpha", room="ops", limit=2, cursor=first["next_cursor"])
    third = reads.list_drawers(ctx, wing="alpha", room="ops", limit=2, cursor=second["next_cursor"])
    seen = [d["content"] for page in (first, second, third) for d in page["drawers"]]
    assert seen == [f"Runbook step {n} of the plan." for n in reversed(range(5))]
    assert third["next_cursor"] is None


def test_search_pages_with_its_cursor(dedup_settings) -> None:
    ctx = context()
    for n in range(3):
        writes.add_drawer(ctx, wing="alpha", room="ops", content=f"Backup {n} runs at {n} am.")
    first = reads.search(ctx, query="backup", limit=2)
    second = reads.search(ctx, query="backup", limit=2, cursor=first["next_cursor"])
    ids = [d["id"] for page in (first, second) for d in page["drawers"]]
    assert len(set(ids)) == 3
    assert second["next_cursor"] is None


@pytest.mark.parametrize("tool", ["list_drawers", "search"])
def test_a_cursor_the_server_did_not_make_is_invalid_cursor(dedup_settings, tool) -> None:
    ctx = context()
    writes.add_drawer(ctx, wing="alpha", room="ops", content=MEMORY)
    arguments = {"wing": "alpha", "room": "ops"} if tool == "list_drawers" else {"query": "backup"}
    answer = getattr(reads, tool)(ctx, cursor="not-a-cursor", **arguments)
    assert refusal(answer)["code"] == "invalid_cursor"


def test_a_scoped_keys_checkpoint_keeps_each_items_destination(dedup_settings) -> None:
    """A key of some wings must name a wing: each item then goes to the room its destination
    names there, not all to one room, and its drawer's source records the destination."""
    items = [
        {"content": "Prefers dark mode in every editor.", "destination": "preference"},
        {"content": "Castellan ships in March.", "destination": "project"},
        {"content": "The office is closed on Fridays.", "destination": "general"},
        {"content": "Wrote the checkpoint code today.", "destination": "diary"},
    ]
    answer = writes.write_checkpoint(
        context(), id="session-1", items=[{**item, "wing": "alpha"} for item in items]
    )
    placed = [(d["wing"], d["room"], d["destination"]) for d in answer["drawers"]]
    assert placed == [
        ("alpha", "preferences", "preference"),
        ("alpha", "projects", "project"),
        ("alpha", "entries", "general"),
        ("alpha", "diary", "diary"),
    ]
    for outcome, item in zip(answer["drawers"], items, strict=True):
        source = Drawer.objects.get(uuid=outcome["drawer"]).source
        assert source["destination"] == item["destination"]


@pytest.mark.parametrize("query", ["東", "の"])
def test_a_search_of_one_character_is_refused_as_rest_refuses_it(dedup_settings, query) -> None:
    answer = reads.search(context(), query=query)
    assert refusal(answer)["code"] == "query_too_short"
