"""Every refusal of the MCP server carries a stable code, as the REST API's do: a JSON-RPC error
the SDK raised itself (params a method does not take, a method or a resource it does not have)
has the REST error body as its data, over stdio and HTTP; an HTTP request the SDK refused in its
own words (no JSON accepted, a DELETE or another method) is the REST body with its code; and the
stdio server that could only fail (no key, a wrong one, a database not migrated) does not start,
saying why in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from api.mcp_server.server import RequireBearer, build_server, http_app
from tests.api.mcp_support import INITIALIZE, ROOT, manage
from tests.api.test_mcp_wire import Stdio, post

# A message, the JSON-RPC code of its answer, and the REST code of its data.
REFUSED = {
    "tools/call without params": (
        {"method": "tools/call"},
        -32602,
        "invalid",
        "params: Field required",
    ),
    "arguments by position": (
        {"method": "tools/call", "params": {"name": "search", "arguments": [1]}},
        -32602,
        "invalid",
        "params.arguments: Input should be a valid dictionary",
    ),
    "an unknown resource": (
        {"method": "resources/read", "params": {"uri": "castellan://nope"}},
        -32602,
        "not_found",
        "No resource at 'castellan://nope': resources/list and resources/templates/list name them.",
    ),
    "an unknown method": (
        {"method": "wings/delete", "params": {}},
        -32601,
        "not_found",
        "No method 'wings/delete' on this server.",
    ),
}


def message(case: dict[str, Any], request_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, **case}).encode()


def assert_coded(answer: dict[str, Any], rpc: int, code: str, words: str) -> None:
    error = answer["error"]
    assert error["code"] == rpc
    assert (error["data"]["code"], error["data"]["error"]) == (code, words)
    assert error["message"] == words


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("case", "rpc", "code", "words"), REFUSED.values(), ids=REFUSED.keys())
def test_http_a_json_rpc_error_of_the_sdk_has_a_code(bearer, case, rpc, code, words) -> None:
    status, content = post(message(case, 41), bearer)
    answer = json.loads(content)
    assert (status, answer["id"]) == (200, 41)
    assert_coded(answer, rpc, code, words)


@pytest.fixture(scope="module")
def palace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A migrated SQLite file and a key for it."""
    database = tmp_path_factory.mktemp("mcp-coded") / "castellan.sqlite3"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings_test",
        "DATABASE_URL": f"sqlite:///{database}",
    }
    env.pop("CASTELLAN_API_KEY", None)
    manage(env, "migrate", "--noinput")
    key = manage(env, "agent_key", "create", "agent-a", "--wings", "alpha").strip().split()[-1]
    return {"env": env, "key": key}


@pytest.fixture(scope="module")
def stdio(palace: dict[str, Any]) -> Iterator[Stdio]:
    server = Stdio({**palace["env"], "CASTELLAN_API_KEY": palace["key"]})
    try:
        assert server.answer(json.dumps(INITIALIZE).encode())["id"] == 1
        server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        yield server
    finally:
        server.close()


@pytest.mark.parametrize(("case", "rpc", "code", "words"), REFUSED.values(), ids=REFUSED.keys())
def test_stdio_a_json_rpc_error_of_the_sdk_has_a_code(stdio, case, rpc, code, words) -> None:
    answer = stdio.answer(message(case, 42))
    assert answer["id"] == 42
    assert_coded(answer, rpc, code, words)


# --- HTTP refusals of the SDK's own --------------------------------------------------------


def request(method: str, accept: bytes, authorization: str) -> tuple[int, dict[str, str], Any]:
    """A request on the ASGI app as uvicorn would make it; a hang fails the test."""
    server = build_server()
    app = RequireBearer(http_app(server))
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        body = message({"method": "ping"}, 7)
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(sending: dict[str, Any]) -> None:
        sent.append(sending)

    headers = [(b"host", b"127.0.0.1"), (b"authorization", authorization.encode())]
    headers += [(b"accept", accept), (b"content-type", b"application/json")]
    scope = {"type": "http", "method": method, "path": "/mcp", "headers": headers}

    async def run() -> None:
        with anyio.fail_after(10):
            async with server.session_manager.run():
                await app(scope, receive, send)

    anyio.run(run)
    answered = {name.decode(): value.decode() for name, value in sent[0]["headers"]}
    content = b"".join(part.get("body", b"") for part in sent[1:])
    return sent[0]["status"], answered, json.loads(content)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("accept", [b"text/event-stream", b"text/html"])
def test_http_a_post_that_takes_no_json_is_not_acceptable(bearer, accept) -> None:
    status, headers, answer = request("POST", accept, bearer)
    assert (status, answer["code"]) == (406, "not_acceptable")
    assert headers["content-type"] == "application/json"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("method", ["DELETE", "PUT", "PATCH", "OPTIONS"])
def test_http_a_method_other_than_post_is_not_allowed(bearer, method) -> None:
    status, headers, answer = request(method, b"application/json, text/event-stream", bearer)
    assert (status, headers["allow"], answer["code"]) == (405, "POST", "method_not_allowed")
    if method == "DELETE":
        assert "no session to end" in answer["error"]


@pytest.mark.django_db(transaction=True)
def test_http_a_post_taking_json_is_answered(bearer) -> None:
    status, _, answer = request("POST", b"application/json", bearer)
    assert (status, answer["id"], answer["result"]) == (200, 7, {})


# --- the stdio server does not start what could only fail ----------------------------------


def started(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "mcp_server"],
        cwd=ROOT,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def refused_to_start(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1
    assert done.stdout == ""  # the protocol's channel: nothing on it
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    return line


def test_stdio_without_a_key_does_not_start(palace) -> None:
    line = refused_to_start(started(palace["env"]))
    assert line.startswith("CommandError: Set CASTELLAN_API_KEY to an agent key")


def test_stdio_with_a_key_that_does_not_sign_in_does_not_start(palace) -> None:
    line = refused_to_start(started({**palace["env"], "CASTELLAN_API_KEY": "nope.not-a-key"}))
    assert line.startswith("CommandError: CASTELLAN_API_KEY does not sign in:")


def test_stdio_on_a_database_not_migrated_does_not_start(palace, tmp_path: Path) -> None:
    env = {**palace["env"], "DATABASE_URL": f"sqlite:///{tmp_path / 'empty.sqlite3'}"}
    line = refused_to_start(started({**env, "CASTELLAN_API_KEY": palace["key"]}))
    assert line.startswith("CommandError: The database is not migrated (")
    assert "run `manage.py migrate` first" in line
