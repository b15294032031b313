"""A checkpoint replays through either route (a production trial): the same id and items sent
over REST and then over MCP (or the other way) answer the first result, where the hash held
the source the route filled in (MCP's `{"via": "mcp", ...}`) and the second route was refused
`checkpoint_id_taken`; a checkpoint stored before under that hash still replays through the
route that made it. And look-alike ids ("cpx-3\u200d", "cp-東京\ufe0f") are one checkpoint,
where each was its own, while one stored before under its id as written still replays."""

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


# Look-alike ids are one checkpoint (the name rule's form, `label_form`), where each was its own.
LOOK_ALIKES = {
    "a joiner": ["cpx-3", "cpx-3\u200d"],
    "Han with a joiner or a selector": ["cp-東京", "cp-東京\u200d", "cp-東京\ufe0f"],
    "a combining accent": ["cp-café", "cp-cafe\u0301"],
}


@pytest.mark.parametrize("keys", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_look_alike_checkpoint_ids_are_one_checkpoint(secret, keys) -> None:
    answers = [
        rest_of(secret).post("/api/checkpoints", {**BODY, "id": key}, format="json")
        for key in reversed(keys)  # the look-alike first: stored in the plain form
    ]
    assert [answer.status_code for answer in answers] == [201] + [200] * (len(keys) - 1)
    assert {answer.json()["id"] for answer in answers} == {keys[0]}
    assert list(Checkpoint.objects.values_list("key", flat=True)) == [keys[0]]
    assert Drawer.objects.count() == 1


def test_a_look_alike_id_with_other_items_is_refused(secret) -> None:
    rest_of(secret).post("/api/checkpoints", {**BODY, "id": "cpx-3"}, format="json")
    other = {"id": "cpx-3\u200d", "items": [{**ITEMS[0], "content": "Another memory here."}]}
    answer = mcp_write(secret, key=other["id"], items=other["items"])
    assert json.loads(answer.content[0].text)["code"] == "checkpoint_id_taken"
    assert Drawer.objects.count() == Checkpoint.objects.count() == 1


def test_an_id_stored_before_as_written_still_replays(secret) -> None:
    """A checkpoint stored under "cpx-4\u200d" before ids were given their form."""
    first = rest_of(secret).post("/api/checkpoints", {**BODY, "id": "cpx-4"}, format="json")
    Checkpoint.objects.update(key="cpx-4\u200d")
    again = rest_of(secret).post("/api/checkpoints", {**BODY, "id": "cpx-4\u200d"}, format="json")
    assert (again.status_code, again.json()["drawers"]) == (200, first.json()["drawers"])
    assert Checkpoint.objects.count() == 1


def test_an_id_past_its_limit_once_composed_is_refused(secret) -> None:
    key = "\u0958" * 200  # each composes to two characters (U+0915 U+093C)
    answer = rest_of(secret).post("/api/checkpoints", {**BODY, "id": key}, format="json")
    assert answer.status_code == 400
    assert answer.json()["details"] == {"field": "id"}
    assert not Checkpoint.objects.exists()
    assert not Drawer.objects.exists()
