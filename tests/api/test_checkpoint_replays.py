"""A checkpoint replays through either route (a production trial): the same id and items sent
over REST and then over MCP (or the other way) answer the first result, where the hash held
the source the route filled in (MCP's `{"via": "mcp", ...}`) and the second route was refused
`checkpoint_id_taken`; a checkpoint stored before under that hash still replays through the
route that made it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from api.mcp_server import writes
from dedup import services
from palace.models import Checkpoint, Drawer
from tests.api.conftest import rest_of
from tests.api.mcp_support import ctx_of

pytestmark = pytest.mark.django_db

ITEMS = [{"content": "checkpoint replay probe content here", "destination": "general"}]
BODY = {"id": "cpx-1", "items": ITEMS}


def mcp_write(secret: str, key: str = "cpx-1", items: list[dict[str, Any]] = ITEMS) -> Any:
    return writes.write_checkpoint(ctx_of(secret), id=key, items=items)


def test_a_rest_checkpoint_replays_over_mcp(secret) -> None:
    first = rest_of(secret).post("/api/checkpoints", BODY, format="json")
    again = rest_of(secret).post("/api/checkpoints", BODY, format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    answer = mcp_write(secret)
    assert answer["replayed"] is True, answer
    assert answer["drawers"] == first.json()["drawers"]
    assert Drawer.objects.count() == Checkpoint.objects.count() == 1


def test_an_mcp_checkpoint_replays_over_rest(secret) -> None:
    first = mcp_write(secret)
    assert first["replayed"] is False
    again = rest_of(secret).post("/api/checkpoints", BODY, format="json")
    assert (again.status_code, again.json()["replayed"]) == (200, True)
    assert again.json()["drawers"] == first["drawers"]
    assert Drawer.objects.count() == 1


def test_the_mcp_default_source_is_still_recorded(secret) -> None:
    mcp_write(secret)
    (drawer,) = Drawer.objects.all()
    assert drawer.source["via"] == "mcp"
    assert drawer.source["checkpoint"] == "cpx-1"


def test_other_items_are_still_refused_across_routes(secret) -> None:
    rest_of(secret).post("/api/checkpoints", BODY, format="json")
    other = [{**ITEMS[0], "source": {"via": "mcp", "user": "agent-a"}}]  # given, not filled in
    answer = mcp_write(secret, items=other)
    assert answer.is_error
    assert json.loads(answer.content[0].text)["code"] == "checkpoint_id_taken"
    assert Drawer.objects.count() == 1


def test_an_mcp_checkpoint_stored_before_replays_over_mcp(secret) -> None:
    """Stored with the hash of then (MCP's default source filled in before hashing)."""
    first = mcp_write(secret)
    item = services.CheckpointItem(
        content=ITEMS[0]["content"],
        destination=services.Destination.GENERAL,
        agent="agent-a",
        source={"via": "mcp", "user": "agent-a"},
    )
    Checkpoint.objects.update(payload_hash=services.checkpoint_payload_hash([item]))
    again = mcp_write(secret)
    assert again["replayed"] is True, again
    assert again["drawers"] == first["drawers"]
    assert Drawer.objects.count() == 1
