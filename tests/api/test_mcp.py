"""The MCP server through the SDK's own client, over stdio (`manage.py mcp_server`) and streamable
HTTP (the command's `--transport http`, and `/mcp` mounted in `config.asgi`).

The server runs in a subprocess, so it cannot see pytest-django's in-memory test database: these
tests migrate a SQLite file of their own and write to it only through the server.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from api.mcp_server.server import server_version
from tests.api.mcp_support import INITIALIZE, ROOT, free_port, manage, wait_for

MEMORY = "The deploy pipeline runs the database migrations before the web processes restart."
TYPO = "The deploy pipeline runs the databse migrations before the web processes restart."
EXPECTED_TOOLS = {
    "add_drawer",
    "check_duplicate",
    "write_diary",
    "write_checkpoint",
    "record_mention",
    "supersede_drawer",
    "search",
    "list_wings",
    "list_rooms",
    "list_drawers",
    "get_drawer",
    "list_duplicates",
}


@pytest.fixture(scope="module")
def palace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A migrated SQLite file, and an agent key that reaches wing `alpha` only."""
    database = tmp_path_factory.mktemp("mcp") / "castellan.sqlite3"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings_test",
        "DATABASE_URL": f"sqlite:///{database}",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
    }
    manage(env, "migrate", "--noinput")
    created = manage(env, "agent_key", "create", "agent-a", "--wings", "alpha")
    key = created.strip().splitlines()[-1]
    yield {"env": env, "key": key, "database": database}


@pytest.fixture(scope="module", params=["command", "asgi"])
def http_server(request: pytest.FixtureRequest, palace: dict[str, Any]) -> Iterator[str]:
    """`manage.py mcp_server --transport http`, or the app's ASGI entry point under uvicorn."""
    port = free_port()
    if request.param == "command":
        command = [sys.executable, "manage.py", "mcp_server", "--transport", "http"]
        command += ["--port", str(port)]
    else:
        command = [sys.executable, "-m", "uvicorn", "config.asgi:application"]
        command += ["--port", str(port), "--log-level", "warning"]
    process = subprocess.Popen(
        command, cwd=ROOT, env=palace["env"], stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


def result_of(answer: Any) -> dict[str, Any]:
    assert not answer.is_error, answer.content
    return json.loads(answer.content[0].text)


def error_of(answer: Any) -> dict[str, Any]:
    assert answer.is_error
    return json.loads(answer.content[0].text)


def rows(database: Path, sql: str) -> int:
    with sqlite3.connect(database) as connection:
        return connection.execute(sql).fetchone()[0]


async def session_scenario(
    transport: AbstractAsyncContextManager[Any], room: str, database: Path
) -> None:
    async with transport as (read, write), ClientSession(read, write) as session:
        initialized = await session.initialize()
        assert initialized.server_info.name == "castellan"
        assert initialized.server_info.version == server_version() != ""
        tools = await session.list_tools()
        assert {tool.name for tool in tools.tools} == EXPECTED_TOOLS
        assert all(tool.description for tool in tools.tools)

        first = result_of(
            await session.call_tool(
                "add_drawer", {"wing": "alpha", "room": room, "content": MEMORY}
            )
        )
        assert first["created"] is True

        again = result_of(
            await session.call_tool(
                "add_drawer", {"wing": "alpha", "room": room, "content": MEMORY}
            )
        )
        assert again["created"] is False
        assert again["id"] == first["id"]

        typo = result_of(
            await session.call_tool("add_drawer", {"wing": "alpha", "room": room, "content": TYPO})
        )
        assert typo["created"] is True
        assert [similar["drawer"] for similar in typo["similar"]] == [first["id"]]

        stored = rows(database, "SELECT count(*) FROM palace_drawer")
        check = result_of(
            await session.call_tool(
                "check_duplicate",
                {
                    "wing": "alpha",
                    "room": room,
                    "content": MEMORY.replace("migrations", "migratoins"),
                },
            )
        )
        assert check["would_store"] is True
        assert first["id"] in {similar["drawer"] for similar in check["similar"]}
        assert rows(database, "SELECT count(*) FROM palace_drawer") == stored

        copy = result_of(
            await session.call_tool(
                "check_duplicate", {"wing": "alpha", "room": room, "content": MEMORY}
            )
        )
        assert copy["would_store"] is False
        assert copy["existing"]["id"] == first["id"]

        refused = error_of(
            await session.call_tool("add_drawer", {"wing": "beta", "room": room, "content": MEMORY})
        )
        assert refused["code"] == "out_of_scope"
        assert rows(database, "SELECT count(*) FROM palace_wing WHERE name = 'beta'") == 0
        assert rows(database, "SELECT count(*) FROM palace_drawer") == stored

        found = result_of(await session.call_tool("search", {"query": "DATABSE", "room": room}))
        assert [drawer["id"] for drawer in found["drawers"]] == [typo["id"]]

        duplicates = result_of(
            await session.call_tool("list_duplicates", {"drawer_id": first["id"]})
        )
        assert [similar["drawer"] for similar in duplicates["similar"]] == [typo["id"]]
        await resources_scenario(session, room)


async def resources_scenario(session: ClientSession, room: str) -> None:
    """The wings and rooms as resources, scoped by the key like the tools."""
    listed = await session.list_resources()
    assert [resource.uri for resource in listed.resources] == ["castellan://wings"]
    templates = await session.list_resource_templates()
    assert [t.uri_template for t in templates.resource_templates] == [
        "castellan://wings/{wing}/rooms"
    ]
    wings = resource_of(await session.read_resource("castellan://wings"))
    assert [wing["name"] for wing in wings["wings"]] == ["alpha"]
    alpha = resource_of(await session.read_resource("castellan://wings/alpha/rooms"))
    assert room in {r["name"] for r in alpha["rooms"]}
    with pytest.raises(MCPError) as refused:
        await session.read_resource("castellan://wings/beta/rooms")
    assert refused.value.data["code"] == "wing_not_found"


def resource_of(answer: Any) -> dict[str, Any]:
    (content,) = answer.contents
    assert content.mime_type == "application/json"
    return json.loads(content.text)


def test_a_session_over_stdio(palace: dict[str, Any]) -> None:
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_server"],
        cwd=ROOT,
        env={**palace["env"], "CASTELLAN_API_KEY": palace["key"]},
    )
    anyio.run(session_scenario, stdio_client(parameters), "stdio", palace["database"])


def test_a_session_over_http(palace: dict[str, Any], http_server: str) -> None:
    async def scenario() -> None:
        headers = {"Authorization": f"Bearer {palace['key']}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as client:
            transport = streamable_http_client(http_server, http_client=client)
            room = "http-" + http_server.rsplit(":", 1)[1].split("/")[0]
            await session_scenario(transport, room, palace["database"])

    anyio.run(scenario)


def test_http_without_a_key_is_refused(http_server: str) -> None:
    answer = httpx2.post(http_server, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert answer.status_code == 401
    assert answer.json()["code"] == "not_authenticated"


def test_http_with_a_wrong_key_is_refused(http_server: str) -> None:
    """From the first request on (`initialize`), not only at a tool call."""
    headers = {"Authorization": "Bearer nope.not-a-key"}
    initialize = INITIALIZE
    accept = {"Accept": "application/json, text/event-stream"}
    answer = httpx2.post(http_server, json=initialize, headers={**headers, **accept})
    assert answer.status_code == 401
    assert answer.json()["code"] == "authentication_failed"

    async def scenario() -> None:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as client,
            streamable_http_client(http_server, http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()

    # The SDK's client gives up with an error (in its task groups), not an initialized session.
    with pytest.raises(ExceptionGroup) as raised:
        anyio.run(scenario)
    assert raised.group_contains(MCPError)
