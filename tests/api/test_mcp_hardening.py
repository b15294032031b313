"""The MCP tools held to the REST API's edge: the same write throttle (one budget per key across
both interfaces), the same check for unstorable strings in every argument, the same codes for a
busy or unreachable database, and never the SDK's bare "Error executing tool"."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from django.db import OperationalError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from api.mcp_server import reads, resources, writes
from api.mcp_server.server import build_server
from dedup import services
from palace.models import Drawer, Wing
from tests.api.conftest import rest_of
from tests.api.mcp_support import call, ctx_of, refusal

pytestmark = pytest.mark.django_db

MEMORY = "The nightly backup copies the object store to the second region at two."
URL = "/api/wings/alpha/rooms/ops/drawers"
NUL_MESSAGE = "Must not contain NUL characters or lone surrogates."


def rest_write(secret: str, n: int) -> int:
    answer = rest_of(secret).post(URL, {"content": f"{MEMORY} {n}"}, format="json")
    return answer.status_code


# Throttling -------------------------------------------------------------------------------------


def test_a_key_throttled_over_rest_is_throttled_over_mcp(secret, write_rate) -> None:
    assert [rest_write(secret, n) for n in range(4)] == [201, 201, 201, 429]
    answer = writes.add_drawer(ctx_of(secret), wing="alpha", room="ops", content=MEMORY)
    body = refusal(answer)
    assert body["code"] == "throttled"
    assert 0 < body["details"]["retry_after"] <= 60
    assert Drawer.objects.count() == 3


def test_mcp_writes_spend_the_same_budget_as_rest(secret, write_rate) -> None:
    for n in range(3):
        writes.add_drawer(ctx_of(secret), wing="alpha", room="ops", content=f"{MEMORY} {n}")
    assert rest_write(secret, 3) == 429


def existing_drawer() -> str:
    result = services.drawer_write_in(
        wing="alpha", room="ops", content=MEMORY, agent="agent-a", source={}
    )
    return str(result.drawer.uuid)


WRITE_CALLS = {
    "add_drawer": lambda ctx, _: writes.add_drawer(ctx, wing="alpha", room="r", content="x y"),
    "check_duplicate": lambda ctx, _: writes.check_duplicate(
        ctx, wing="alpha", room="r", content="x y"
    ),
    "write_diary": lambda ctx, _: writes.write_diary(ctx, wing="alpha", content="x y"),
    "write_checkpoint": lambda ctx, _: writes.write_checkpoint(
        ctx, id="c1", items=[{"content": "x y", "destination": "project"}]
    ),
    "record_mention": lambda ctx, drawer: writes.record_mention(ctx, drawer_id=drawer, name="X"),
    "supersede_drawer": lambda ctx, drawer: writes.supersede_drawer(ctx, drawer_id=drawer),
}


@pytest.mark.parametrize("name", sorted(WRITE_CALLS))
def test_every_write_tool_is_throttled(secret, write_rate, name) -> None:
    drawer = existing_drawer()
    for n in range(3):
        rest_write(secret, n)
    answer = WRITE_CALLS[name](ctx_of(secret), drawer)
    assert refusal(answer)["code"] == "throttled"


def test_reads_are_not_throttled(secret, write_rate) -> None:
    for n in range(4):
        rest_write(secret, n)
    assert [wing["name"] for wing in reads.list_wings(ctx_of(secret))["wings"]] == ["alpha"]


# Unstorable strings -----------------------------------------------------------------------------

UNSTORABLE_CALLS = [
    ("add_drawer", {"wing": "w", "room": "r", "content": "x", "source": {"a": "\x00"}}, "source.a"),
    ("add_drawer", {"wing": "w", "room": "r", "content": "x", "source": {"a\x00": 1}}, "source"),
    (
        "add_drawer",
        {"wing": "w", "room": "r", "content": "x", "source": {"a": [{"b": "\ud800"}]}},
        "source.a[0].b",
    ),
    ("add_drawer", {"wing": "w", "room": "r", "content": "x\udfff"}, "content"),
    ("add_drawer", {"wing": "w\x00", "room": "r", "content": "x"}, "wing"),
    ("check_duplicate", {"wing": "w", "room": "r\x00", "content": "x"}, "room"),
    ("write_diary", {"wing": "w", "content": "x", "source": {"a": "\x00"}}, "source.a"),
    (
        "write_checkpoint",
        {
            "id": "c1",
            "items": [{"content": "x", "destination": "project", "source": {"a": "\x00"}}],
        },
        "items[0].source.a",
    ),
    ("record_mention", {"drawer_id": "d", "name": "n\x00"}, "name"),
    ("supersede_drawer", {"drawer_id": "x", "by": "\x00"}, "by"),
    ("list_rooms", {"wing": "w\x00"}, "wing"),
    ("list_drawers", {"wing": "w", "room": "r\x00"}, "room"),
    ("search", {"query": "x", "wing": "w\x00"}, "wing"),
    ("search", {"query": "x", "room": "r\x00"}, "room"),
    ("search", {"query": "x", "agent": "a\x00"}, "agent"),
    ("search", {"query": "x\ud800"}, "query"),
]


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    UNSTORABLE_CALLS,
    ids=[f"{name}-{field}" for name, _, field in UNSTORABLE_CALLS],
)
def test_an_unstorable_string_anywhere_is_invalid(secret, name, arguments, field) -> None:
    function = getattr(writes, name, None) or getattr(reads, name)
    body = refusal(function(ctx_of(secret), **arguments))
    assert body["code"] == "invalid"
    assert body["error"] == f"{field}: {NUL_MESSAGE}"
    assert Drawer.objects.count() == 0
    assert Wing.objects.count() == 0


def test_a_nul_in_a_resources_wing_is_invalid(secret) -> None:
    with pytest.raises(MCPError) as refused:
        resources.rooms("w\x00", ctx_of(secret))
    assert refused.value.data["code"] == "invalid"


def test_through_the_sdk_a_nul_is_the_apis_invalid(secret) -> None:
    arguments = {"wing": "w", "room": "r", "content": "x", "source": {"a": "\x00"}}
    body = refusal(call(secret, "add_drawer", arguments))
    assert body["code"] == "invalid"
    assert Drawer.objects.count() == 0


def test_through_the_sdk_a_wrong_type_is_the_apis_invalid(secret) -> None:
    body = refusal(call(secret, "list_drawers", {"wing": "w", "room": "r", "limit": "many"}))
    assert body["code"] == "invalid"
    assert body["error"].startswith("limit: ")


@pytest.mark.parametrize("name", ["no_such_tool", "", "x" * 5000])
def test_through_the_sdk_an_unknown_tool_is_not_found(secret, name) -> None:
    body = refusal(call(secret, name, {}))
    assert body["code"] == "not_found"
    assert body["error"].startswith("No tool named")


@pytest.mark.parametrize("name", ["no_such_prompt", "", "x" * 5000])
def test_through_the_sdk_an_unknown_prompt_is_not_found(name) -> None:
    async def run() -> Any:
        return await build_server().get_prompt(name, {})

    with pytest.raises(MCPError) as refused:
        anyio.run(run)
    assert refused.value.error.code == INVALID_PARAMS
    assert refused.value.data["code"] == "not_found"
    assert refused.value.data["error"].startswith("No prompt named")
    assert len(refused.value.data["error"]) < 200


# Database failures ------------------------------------------------------------------------------


class PostgresError(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def operational_error(message: str, sqlstate: str | None) -> OperationalError:
    error = OperationalError(message)
    error.__cause__ = PostgresError(sqlstate) if sqlstate else None
    return error


BUSY = [  # and the seconds to wait: a lock waited on for its whole timeout, longer
    ("database is locked", None, 5),
    ("deadlock detected", "40P01", 1),
    ("could not serialize access", "40001", 1),
    ("canceling statement due to lock timeout", "55P03", 5),
]


@pytest.mark.parametrize(("message", "sqlstate", "wait"), BUSY, ids=[m for m, _, _ in BUSY])
def test_a_busy_database_is_database_busy(secret, monkeypatch, message, sqlstate, wait) -> None:
    drawer = existing_drawer()

    def busy(**kwargs: Any) -> None:
        raise operational_error(message, sqlstate)

    monkeypatch.setattr(services, "drawer_supersede", busy)
    body = refusal(writes.supersede_drawer(ctx_of(secret), drawer_id=drawer))
    assert body["code"] == "database_busy"
    assert body["details"] == {"retry_after": wait}


def test_an_unreachable_database_is_database_unavailable(secret, monkeypatch) -> None:
    def gone(**kwargs: Any) -> None:
        raise operational_error("server closed the connection unexpectedly", "08006")

    monkeypatch.setattr(services, "drawer_write_in", gone)
    answer = writes.add_drawer(ctx_of(secret), wing="alpha", room="ops", content=MEMORY)
    assert refusal(answer)["code"] == "database_unavailable"


def test_a_crash_is_server_error_and_logged(secret, monkeypatch, caplog) -> None:
    def crash(**kwargs: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(services, "drawer_write_in", crash)
    answer = writes.add_drawer(ctx_of(secret), wing="alpha", room="ops", content=MEMORY)
    assert refusal(answer) == {"error": "Internal server error.", "code": "server_error"}
    assert "a bug" in caplog.text
