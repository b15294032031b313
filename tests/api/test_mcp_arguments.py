"""An MCP tool's arguments are held to the REST API's rules, not coerced or clamped: a JSON value
of the schema's type only (not "2" or true for an integer, "yes" for a boolean), a page size
within its bounds (the REST serializer's own check and message), and no argument the tool does
not declare; each refusal `invalid`, naming the argument. tools/list says all of it: closed
schemas, strict types, the bounds."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from api.mcp_server import reads
from api.mcp_server.server import build_server
from api.models import ALL_WINGS, RIGHTS, AgentKey
from api.serializers.search import SearchQuerySerializer
from dedup import services
from palace.models import Drawer
from tests.api.conftest import rest_of
from tests.api.mcp_support import call, ctx_of, refusal

pytestmark = pytest.mark.django_db

MEMORY = "The nightly backup copies the object store to the second region at two."


@pytest.fixture
def secret(dedup_settings) -> str:
    _, secret = AgentKey.objects.issue(agent="agent-a", wings=(ALL_WINGS,), rights=RIGHTS)
    services.drawer_write_in(wing="alpha", room="ops", content=MEMORY, agent="agent-a", source={})
    return secret


def rest_search(secret: str, limit: Any) -> dict[str, Any]:
    answer = rest_of(secret).get("/api/search", {"q": "backup", "limit": limit})
    assert answer.status_code == 400
    return answer.json()


@pytest.mark.parametrize("limit", [-1, 0, 201, 10**30])
def test_a_search_limit_out_of_bounds_is_refused_as_rest_refuses_it(secret, limit) -> None:
    body = refusal(reads.search(ctx_of(secret), query="backup", limit=limit))
    assert body["code"] == "invalid"
    assert body == rest_search(secret, limit)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("the and", "query has no word to search by"),
        ("x" * 1001, "query: Ensure this field has no more than 1000 characters."),
    ],
    ids=["no word", "too long"],
)
def test_a_search_refusal_names_the_tool_s_argument(secret, query, message) -> None:
    """The REST route's parameter is `q`; the tool's argument is `query`."""
    body = refusal(reads.search(ctx_of(secret), query=query))
    assert body["error"].startswith(message)
    named = body["details"].get("field") or next(iter(body["details"]["fields"]))
    assert named == "query"


@pytest.mark.parametrize("limit", [-1, 0, 201, 10**30])
def test_a_list_drawers_limit_out_of_bounds_is_refused(secret, limit) -> None:
    body = refusal(reads.list_drawers(ctx_of(secret), wing="alpha", room="ops", limit=limit))
    assert body["code"] == "invalid"
    assert body["error"].startswith("limit: Ensure this value is ")


@pytest.mark.parametrize("limit", ["2", True, 2.0, None, [2]])
@pytest.mark.parametrize("name", ["search", "list_drawers"])
def test_a_limit_that_is_no_integer_is_refused(secret, name, limit) -> None:
    arguments = {"query": "backup"} if name == "search" else {"wing": "alpha", "room": "ops"}
    body = refusal(call(secret, name, {**arguments, "limit": limit}))
    assert body["code"] == "invalid"
    assert body["error"].startswith("limit: ")


@pytest.mark.parametrize("flag", ["yes", "true", 1, 0, None])
def test_include_superseded_that_is_no_boolean_is_refused(secret, flag) -> None:
    arguments = {"wing": "alpha", "room": "ops", "include_superseded": flag}
    body = refusal(call(secret, "list_drawers", arguments))
    assert body["code"] == "invalid"
    assert body["error"].startswith("include_superseded: ")


def test_the_bounds_and_booleans_themselves_are_accepted(secret) -> None:
    ctx = ctx_of(secret)
    for limit in (1, 200):
        assert len(reads.search(ctx, query="backup", limit=limit)["drawers"]) == 1
    found = reads.list_drawers(ctx, wing="alpha", room="ops", include_superseded=True, limit=200)
    assert len(found["drawers"]) == 1


DRAWER = "00000000-0000-4000-8000-000000000000"
VALID = {
    "add_drawer": {"wing": "alpha", "room": "ops", "content": "x y"},
    "check_duplicate": {"wing": "alpha", "room": "ops", "content": "x y"},
    "write_diary": {"wing": "alpha", "content": "x y"},
    "write_checkpoint": {"id": "c1", "items": [{"content": "x y", "destination": "project"}]},
    "record_mention": {"drawer_id": DRAWER, "name": "X"},
    "supersede_drawer": {"drawer_id": DRAWER},
    "search": {"query": "backup"},
    "list_wings": {},
    "list_rooms": {"wing": "alpha"},
    "list_drawers": {"wing": "alpha", "room": "ops"},
    "get_drawer": {"drawer_id": DRAWER},
    "list_duplicates": {"drawer_id": DRAWER},
}


@pytest.mark.parametrize("extra", ["bogus", "ctx", "limt"])
@pytest.mark.parametrize("name", sorted(VALID))
def test_an_argument_the_tool_does_not_declare_is_refused(secret, name, extra) -> None:
    body = refusal(call(secret, name, {**VALID[name], extra: 1}))
    assert body["code"] == "invalid"
    assert body["error"] == f"{extra}: Unknown field."
    assert Drawer.objects.count() == 1


def test_an_unknown_field_is_worded_as_rest_words_it(secret) -> None:
    rest = rest_of(secret).post(
        "/api/wings/alpha/rooms/ops/drawers", {"content": "x y", "bogus": 1}, format="json"
    )
    mcp = refusal(call(secret, "add_drawer", {**VALID["add_drawer"], "bogus": 1}))
    assert (rest.status_code, rest.json()["error"]) == (400, mcp["error"])


def test_a_checkpoint_items_unknown_key_is_refused(secret) -> None:
    item = {"content": "x y", "destination": "project", "bogus": 1}
    body = refusal(call(secret, "write_checkpoint", {"id": "c1", "items": [item]}))
    assert body["code"] == "invalid"
    assert body["error"] == "items[0].bogus: Unknown field."
    assert Drawer.objects.count() == 1


def tools() -> dict[str, dict[str, Any]]:
    async def run() -> Any:
        return await build_server().list_tools()

    return {tool.name: tool.input_schema for tool in anyio.run(run)}


def test_every_schema_is_closed() -> None:
    schemas = tools()
    assert set(schemas) == set(VALID)
    assert all(schema["additionalProperties"] is False for schema in schemas.values())
    item = schemas["write_checkpoint"]["$defs"]["CheckpointItem"]
    assert item["additionalProperties"] is False


def test_the_schemas_say_the_types_and_bounds_checked() -> None:
    schemas = tools()
    rest = SearchQuerySerializer().fields["limit"]
    search = schemas["search"]["properties"]["limit"]
    assert (search["type"], search["minimum"], search["maximum"]) == (
        "integer",
        rest.min_value,
        rest.max_value,
    )
    drawers = schemas["list_drawers"]["properties"]
    limit = reads.DrawerPageSerializer().fields["limit"]
    assert (drawers["limit"]["minimum"], drawers["limit"]["maximum"]) == (
        limit.min_value,
        limit.max_value,
    )
    assert drawers["include_superseded"]["type"] == "boolean"


def many_unknown(count: int) -> dict[str, int]:
    return {f"bogus{i:06d}": 0 for i in range(count)}


def test_a_flood_of_unknown_fields_is_refused_naming_ten_and_counting_the_rest(secret) -> None:
    """A body of 1.5 million unknown keys took 18 s and 2 GB to refuse, in a 40 MB answer naming
    each (a helper's deployed trial); REST and MCP now name the first ten."""
    rest = rest_of(secret).post(
        "/api/wings/alpha/rooms/ops/drawers",
        {"content": "x y", **many_unknown(5000)},
        format="json",
    )
    mcp = refusal(call(secret, "add_drawer", {**VALID["add_drawer"], **many_unknown(5000)}))
    for body in (rest.json(), mcp):
        assert body["code"] == "invalid"
        assert sorted(body["details"]["fields"]) == [f"bogus{i:06d}" for i in range(10)]
        assert body["error"] == (
            "bogus000000: Unknown field; 4,990 more unknown fields are not named."
        )
    assert Drawer.objects.count() == 1


def test_a_refusal_names_at_most_twenty_problems_and_counts_the_rest(secret) -> None:
    items = [{"content": "x y", "destination": "project", **many_unknown(3)} for _ in range(30)]
    rest = rest_of(secret).post("/api/checkpoints", {"id": "c1", "items": items}, format="json")
    mcp = refusal(call(secret, "write_checkpoint", {"id": "c1", "items": items}))
    assert rest.status_code == 400
    named = rest.json()["details"]["fields"]["items"]
    assert sum(len(fields) for fields in named.values()) == 20
    assert rest.json()["details"]["fields_left_off"] == 70
    assert len(str(mcp["details"])) < 3000
    assert Drawer.objects.count() == 1
