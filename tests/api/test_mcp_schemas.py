"""What tools/list tells a model, so it can call a tool right the first time: every argument
described, the bounds the server holds it to said in the schema (a kind's pattern, a
destination's values, an id's format, a length), each said bound the one enforced, and the
server's own name and version."""

from __future__ import annotations

import tomllib
from typing import Any

import anyio
import pytest

from api.mcp_server import reads, writes
from api.mcp_server.server import build_server
from dedup import services
from dedup.search import QUERY_MAX_CHARACTERS
from dedup.validation import KIND_PATTERN
from tests.api.mcp_support import ROOT

UUID = {"type": "string", "format": "uuid"}
KIND_TOOLS = ["add_drawer", "check_duplicate", "write_diary", "record_mention"]


def listed() -> dict[str, Any]:
    async def run() -> Any:
        return await build_server().list_tools()

    return {tool.name: tool for tool in anyio.run(run)}


def properties(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every property of a schema, its definitions' (a checkpoint's item) too, by path."""
    found = {name: value for name, value in schema.get("properties", {}).items()}
    for definition, nested in schema.get("$defs", {}).items():
        found |= {f"{definition}.{name}": value for name, value in nested["properties"].items()}
    return found


def string_branch(prop: dict[str, Any]) -> dict[str, Any]:
    """The string schema of a property, optional (`anyOf` string, null) or not."""
    branches = prop.get("anyOf", [prop])
    (string,) = [branch for branch in branches if branch.get("type") == "string"]
    return string


def test_every_argument_of_every_tool_is_described() -> None:
    undescribed = [
        f"{tool.name}.{path}"
        for tool in listed().values()
        for path, prop in properties(tool.input_schema).items()
        if not prop.get("description", "").strip()
    ]
    assert undescribed == []


def test_every_tool_description_is_clean_text() -> None:
    for tool in listed().values():
        description = tool.description or ""
        assert description == description.strip(), tool.name
        assert "\n    " not in description, tool.name  # the docstring's indentation


@pytest.mark.parametrize("name", KIND_TOOLS)
def test_a_kind_says_its_pattern_and_which_kind_it_is(name: str) -> None:
    kind = listed()[name].input_schema["properties"]["kind"]
    string = string_branch(kind)
    assert (string["pattern"], string["maxLength"]) == (KIND_PATTERN.pattern, 32)
    what = "entity" if name == "record_mention" else "memory"
    assert kind["description"].startswith(f"The {what}'s kind")


def test_a_checkpoint_item_says_its_destinations_and_kind() -> None:
    item = listed()["write_checkpoint"].input_schema["$defs"]["CheckpointItem"]["properties"]
    assert item["destination"]["enum"] == ["general", "preference", "project", "diary"]
    assert string_branch(item["kind"])["pattern"] == KIND_PATTERN.pattern
    items = listed()["write_checkpoint"].input_schema["properties"]["items"]
    assert (items["minItems"], items["maxItems"]) == (1, 1000)


@pytest.mark.parametrize(
    ("name", "argument"),
    [
        ("add_drawer", "id"),
        ("check_duplicate", "id"),
        ("record_mention", "drawer_id"),
        ("supersede_drawer", "drawer_id"),
        ("supersede_drawer", "by"),
        ("list_duplicates", "drawer_id"),
        ("get_drawer", "drawer_id"),
    ],
)
def test_an_id_says_it_is_a_uuid(name: str, argument: str) -> None:
    prop = listed()[name].input_schema["properties"][argument]
    assert string_branch(prop) | UUID == string_branch(prop)


def test_the_search_query_says_its_rules() -> None:
    search = listed()["search"]
    query = search.input_schema["properties"]["query"]
    assert query["maxLength"] == QUERY_MAX_CHARACTERS
    for rule in ("three letters", "function words", "1,000 characters"):
        assert rule in query["description"]
    assert not search.description.endswith("\n")


def test_the_source_says_what_it_is() -> None:
    for name in ("add_drawer", "write_diary"):
        source = listed()[name].input_schema["properties"]["source"]
        assert "came from" in source["description"]


def test_the_server_says_its_version() -> None:
    with open(ROOT / "pyproject.toml", "rb") as pyproject:
        version = tomllib.load(pyproject)["project"]["version"]
    server = build_server()
    assert (server.name, server.version) == ("castellan", version)


# --- each bound said is the bound enforced ----------------------------------------------------


def tool_function(name: str) -> Any:
    return getattr(writes, name, None) or getattr(reads, name)


@pytest.fixture
def valid(ctx) -> dict[str, dict[str, Any]]:
    """Arguments each tool takes, about one drawer."""
    drawer = services.drawer_write_in(
        wing="alpha", room="ops", content="The nightly backup runs at two.", agent="agent-a"
    ).drawer
    item = {"content": "x y", "destination": "project"}
    return {
        "add_drawer": {"wing": "alpha", "room": "ops", "content": "x y"},
        "check_duplicate": {"wing": "alpha", "room": "ops", "content": "x y"},
        "write_diary": {"wing": "alpha", "content": "x y"},
        "write_checkpoint": {"id": "c1", "items": [item]},
        "record_mention": {"drawer_id": str(drawer.uuid), "name": "X"},
        "supersede_drawer": {"drawer_id": str(drawer.uuid)},
        "search": {"query": "backup"},
        "list_rooms": {"wing": "alpha"},
        "list_drawers": {"wing": "alpha", "room": "ops"},
        "get_drawer": {"drawer_id": str(drawer.uuid)},
        "list_duplicates": {"drawer_id": str(drawer.uuid)},
    }


def breaking(prop: dict[str, Any]) -> list[Any]:
    """Values a property's schema says are out of bounds."""
    strings = [b for b in prop.get("anyOf", [prop]) if b.get("type") == "string"]
    string = strings[0] if strings else {}
    values: list[Any] = []
    if "maxLength" in string:
        values.append("k" * (string["maxLength"] + 1))
    if string.get("minLength") == 1:
        values.append("")
    if "pattern" in string:
        values.append("Person Name")
    if string.get("format") == "uuid":
        values.append("not-a-uuid")
    if "enum" in prop:
        values.append("bogus")
    return values


@pytest.mark.django_db
def test_each_bound_said_is_enforced(ctx, valid) -> None:
    checked = 0
    for name, tool in listed().items():
        if name not in valid:
            continue
        for path, prop in properties(tool.input_schema).items():
            for value in breaking(prop):
                arguments = dict(valid[name])
                if path.startswith("CheckpointItem."):
                    arguments["items"] = [{**arguments["items"][0], path.split(".")[1]: value}]
                else:
                    arguments[path] = value
                answer = tool_function(name)(ctx, **arguments)
                assert getattr(answer, "is_error", False), (name, path, value)
                checked += 1
    assert checked > 30
