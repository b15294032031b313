"""Every message gets an answer, over real stdio (`manage.py mcp_server` in a subprocess) and
over HTTP: one holding a lone surrogate (the JSON escape `\\ud800`, which the SDK's reader
refuses as malformed and used to drop without a word, the client waiting forever) is the REST
API's `invalid` naming where; a line that is no JSON a -32700 parse error, one that is JSON but
no JSON-RPC message -32600, each with the REST error body as data."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from api.mcp_server.server import RequireBearer, build_server, http_app
from tests.api.mcp_support import INITIALIZE, ROOT, manage

NUL_MESSAGE = "Must not contain NUL characters or lone surrogates."
# json.dumps writes the lone surrogate as the escape `\ud800`, as an attacker's client would.
SEARCH = {
    "jsonrpc": "2.0",
    "id": 901,
    "method": "tools/call",
    "params": {"name": "search", "arguments": {"query": "x\ud800"}},
}
ROOMS = {
    "jsonrpc": "2.0",
    "id": 902,
    "method": "resources/read",
    "params": {"uri": "castellan://wings/\ud800/rooms"},
}


class Stdio:
    """`manage.py mcp_server` over pipes: a line in, the answers read by a thread, so that an
    answer that never comes fails the test after a few seconds instead of hanging it."""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "mcp_server"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.answers: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self) -> None:
        for line in self.process.stdout:  # type: ignore[union-attr]
            self.answers.put(line)

    def send(self, line: bytes) -> None:
        self.process.stdin.write(line + b"\n")  # type: ignore[union-attr]
        self.process.stdin.flush()  # type: ignore[union-attr]

    def answer(self, line: bytes, timeout: float = 15) -> dict[str, Any]:
        self.send(line)
        try:
            return json.loads(self.answers.get(timeout=timeout))
        except queue.Empty:
            raise AssertionError(f"no answer to {line[:80]!r}") from None

    def close(self) -> None:
        self.process.stdin.close()  # type: ignore[union-attr]
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stdio]:
    """The server over stdio on a migrated SQLite file of its own, initialized, with a key that
    reaches wing `alpha`."""
    database = tmp_path_factory.mktemp("mcp-wire") / "castellan.sqlite3"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings_test",
        "DATABASE_URL": f"sqlite:///{database}",
    }
    manage(env, "migrate", "--noinput")
    key = manage(env, "agent_key", "create", "agent-a", "--wings", "alpha").strip().split()[-1]
    server = Stdio({**env, "CASTELLAN_API_KEY": key})
    try:
        assert server.answer(json.dumps(INITIALIZE).encode())["id"] == 1
        server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        yield server
    finally:
        server.close()


def tool_refusal(answer: dict[str, Any]) -> dict[str, Any]:
    result = answer["result"]
    assert result["isError"] is True
    body = json.loads(result["content"][0]["text"])
    assert body == result["structuredContent"]
    return body


def test_stdio_a_lone_surrogate_in_a_tools_arguments_is_invalid(stdio: Stdio) -> None:
    answer = stdio.answer(json.dumps(SEARCH).encode())
    assert answer["id"] == 901
    body = tool_refusal(answer)
    assert body["code"] == "invalid"
    assert body["error"] == f"query: {NUL_MESSAGE}"


def test_stdio_a_lone_surrogate_in_a_resources_uri_is_invalid(stdio: Stdio) -> None:
    answer = stdio.answer(json.dumps(ROOMS).encode())
    assert answer["id"] == 902
    assert answer["error"]["code"] == -32602
    assert answer["error"]["data"]["code"] == "invalid"
    assert answer["error"]["data"]["error"] == f"params.uri: {NUL_MESSAGE}"


def test_stdio_a_lone_surrogate_elsewhere_is_invalid(stdio: Stdio) -> None:
    ping = {"jsonrpc": "2.0", "id": 903, "method": "ping", "params": {"_meta": {"a": "\udfff"}}}
    answer = stdio.answer(json.dumps(ping).encode())
    assert answer["id"] == 903
    assert answer["error"]["data"]["error"] == f"params._meta.a: {NUL_MESSAGE}"


def test_stdio_an_id_holding_a_lone_surrogate_is_answered_with_none(stdio: Stdio) -> None:
    answer = stdio.answer(json.dumps({**SEARCH, "id": "\ud800"}).encode())
    assert answer["id"] is None
    assert answer["error"]["code"] == -32602
    assert answer["error"]["data"]["error"] == f"query: {NUL_MESSAGE}"


@pytest.mark.parametrize("line", [b"not json", b'{"jsonrpc": "2.0", "id": 904', b"\xff\xfe"])
def test_stdio_a_line_that_is_no_json_is_a_parse_error(stdio: Stdio, line: bytes) -> None:
    answer = stdio.answer(line)
    assert answer["id"] is None
    assert answer["error"]["code"] == -32700
    assert answer["error"]["data"]["code"] == "invalid_json"


# Lines Python's decoder refuses, in the sender's terms as the REST API's body (test_bad_input):
# Python's own told how to decode with utf-8-sig, how to raise the interpreter's digit limit.
UNDECODABLE = {
    "a byte order mark": (
        b'\xef\xbb\xbf{"jsonrpc": "2.0", "id": 908, "method": "ping"}',
        "The message is not JSON: a byte order mark (U+FEFF) before the JSON, which JSON sent "
        "over a network must not start with (RFC 8259).",
    ),
    "5,000 digits": (
        b'{"jsonrpc": "2.0", "id": 909, "method": "ping", "params": {"n": ' + b"9" * 5000 + b"}}",
        "The message is not JSON: an integer of more than 4300 digits.",
    ),
    # The SDK's reader takes NaN and Infinity (as pydantic does); the REST API does not.
    "NaN": (
        b'{"jsonrpc": "2.0", "id": 910, "method": "ping", "params": {"n": NaN}}',
        "The message is not JSON: Out of range float values are not JSON compliant: 'NaN'",
    ),
    "Infinity in a tool's arguments": (
        b'{"jsonrpc": "2.0", "id": 911, "method": "tools/call", "params": {"name": "search", '
        b'"arguments": {"query": "x", "limit": Infinity}}}',
        "The message is not JSON: Out of range float values are not JSON compliant: 'Infinity'",
    ),
}


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# Nested past Python's own limit, a message was answered "maximum recursion depth exceeded while
# decoding a JSON array from a unicode string" (the attack trial): no id can be read from it.
UNDECODABLE["nested 3,000 levels"] = (
    f'{{"jsonrpc": "2.0", "id": 912, "method": "ping", "params": {{"a": {nested(3000)}}}}}'.encode(),
    "JSON nested deeper than 32 levels.",
)


@pytest.mark.parametrize(("line", "words"), UNDECODABLE.values(), ids=UNDECODABLE.keys())
def test_stdio_a_line_the_decoder_refuses_is_a_parse_error_saying_why(stdio: Stdio, line, words):
    answer = stdio.answer(line)
    assert answer["error"]["code"] == -32700
    assert answer["error"]["data"] == {"error": words, "code": "invalid_json"}


@pytest.mark.parametrize("line", [b"[]", b"7", b'{"jsonrpc": "2.0", "id": 905, "method": 7}'])
def test_stdio_json_that_is_no_message_is_an_invalid_request(stdio: Stdio, line: bytes) -> None:
    answer = stdio.answer(line)
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600
    assert answer["error"]["data"]["code"] == "invalid"


PARAMS_BY_POSITION = b'{"jsonrpc": "2.0", "id": 907, "method": "tools/list", "params": [1]}'


def test_stdio_parameters_by_position_are_invalid_params_of_that_request(stdio: Stdio) -> None:
    """JSON-RPC allows them, MCP does not: -32602 answering the request's id, not -32600 with
    none as for a document that is no request at all."""
    answer = stdio.answer(PARAMS_BY_POSITION)
    assert answer["id"] == 907
    assert answer["error"]["code"] == -32602
    assert answer["error"]["data"]["details"] == {"field": "params"}


@pytest.mark.parametrize("request_id", ["true", "null", "1.5", '{"a": 1}', "[1]"])
def test_stdio_a_request_with_an_id_of_another_type_is_an_invalid_request(stdio: Stdio, request_id):
    """The SDK read it as a notification, dropping the id before Castellan saw the message: no
    answer ever, as over HTTP before (the attack trial)."""
    line = f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/list"}}'.encode()
    answer = stdio.answer(line)
    assert (answer["id"], answer["error"]["code"]) == (None, -32600)
    assert answer["error"]["data"]["error"].startswith("A request's id must be a string")


def test_stdio_a_notification_is_still_not_answered(stdio: Stdio) -> None:
    """No id at all is a notification (JSON-RPC): the next answer is the next request's."""
    stdio.send(b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}')
    stdio.send(b'{"jsonrpc": "2.0", "method": "tools/list"}')
    assert stdio.answer(b'{"jsonrpc": "2.0", "id": 910, "method": "ping"}')["id"] == 910


def test_stdio_the_server_still_answers_after_them(stdio: Stdio) -> None:
    stdio.send(b"")  # a blank line is no message: nothing to answer
    call = {"jsonrpc": "2.0", "id": 906, "method": "tools/call"}
    call["params"] = {"name": "list_wings", "arguments": {}}
    answer = stdio.answer(json.dumps(call).encode())
    assert answer["id"] == 906
    assert answer["result"]["isError"] is False


# Over HTTP, in-process ------------------------------------------------------------------------


def post(
    body: bytes,
    authorization: str,
    host: bytes = b"127.0.0.1",
    origin: bytes | None = None,
    headers: tuple[tuple[bytes, bytes], ...] = (),
) -> tuple[int, bytes]:
    """A POST on the ASGI app as uvicorn would make it, its session manager running; a hang
    fails the test."""
    server = build_server()
    app = RequireBearer(http_app(server))
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [
            (b"host", host),
            (b"accept", b"application/json, text/event-stream"),
            (b"content-type", b"application/json"),
            (b"authorization", authorization.encode()),
            *([(b"origin", origin)] if origin is not None else []),
            *headers,
        ],
    }

    async def run() -> None:
        with anyio.fail_after(10):
            async with server.session_manager.run():
                await app(scope, receive, send)

    anyio.run(run)
    return sent[0]["status"], b"".join(message.get("body", b"") for message in sent[1:])


# The key is read on a worker thread, with a connection of its own: it must be committed.
@pytest.mark.django_db(transaction=True)
def test_http_a_lone_surrogate_in_a_tools_arguments_is_invalid(bearer: str) -> None:
    status, content = post(json.dumps(SEARCH).encode(), bearer)
    assert status == 200
    answer = json.loads(content)
    assert answer["id"] == 901
    assert tool_refusal(answer)["error"] == f"query: {NUL_MESSAGE}"


@pytest.mark.django_db(transaction=True)
def test_http_a_lone_surrogate_in_a_resources_uri_is_invalid(bearer: str) -> None:
    status, content = post(json.dumps(ROOMS).encode(), bearer)
    assert status == 200
    error = json.loads(content)["error"]
    assert error["code"] == -32602
    assert error["data"]["code"] == "invalid"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("body", [b"not json", b'{"jsonrpc": "2.0", "id": 904', b"\xff\xfe"])
def test_http_a_body_that_is_no_json_is_a_parse_error_as_over_stdio(bearer: str, body) -> None:
    status, content = post(body, bearer)
    assert status == 400
    answer = json.loads(content)
    assert answer["error"]["code"] == -32700
    assert answer["error"]["data"]["code"] == "invalid_json"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("body", "words"), UNDECODABLE.values(), ids=UNDECODABLE.keys())
def test_http_a_body_the_decoder_refuses_is_a_parse_error_saying_why(bearer: str, body, words):
    status, content = post(body, bearer)
    assert status == 400
    answer = json.loads(content)
    assert answer["error"]["code"] == -32700
    assert answer["error"]["data"] == {"error": words, "code": "invalid_json"}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "body", [b"[]", b"[1, 2]", b"7", b'{"foo": 1}', b'{"jsonrpc": "2.0", "id": 905, "method": 7}']
)
def test_http_json_that_is_no_message_is_an_invalid_request_as_over_stdio(bearer: str, body):
    """The SDK answered these -32602 "Validation error" with its eleven validation errors."""
    status, content = post(body, bearer)
    assert status == 400
    answer = json.loads(content)
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600
    assert answer["error"]["data"]["code"] == "invalid"


@pytest.mark.django_db(transaction=True)
def test_http_parameters_by_position_are_invalid_params_of_that_request(bearer: str) -> None:
    status, content = post(PARAMS_BY_POSITION, bearer)
    answer = json.loads(content)
    assert (status, answer["id"], answer["error"]["code"]) == (200, 907, -32602)  # as the SDK
    assert answer["error"]["data"]["code"] == "invalid"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("request_id", ["true", "null", "1.5", '{"a": 1}', "[1]"])
def test_http_a_request_with_an_id_of_another_type_is_an_invalid_request(bearer: str, request_id):
    """The SDK read it as a notification: 202, no answer ever (the attack trial)."""
    body = f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/list"}}'.encode()
    status, content = post(body, bearer)
    answer = json.loads(content)
    assert (status, answer["id"], answer["error"]["code"]) == (400, None, -32600)


def test_the_screened_stdin_leaves_the_process_s_stdin_open() -> None:
    """Its text layer closed (garbage collection closes it) leaves the buffer it reads open."""
    import gc
    import io

    from api.mcp_server.wire import ScreenedStdin

    buffer = io.BytesIO(b"{}\n")
    screened = ScreenedStdin(buffer)
    del screened
    gc.collect()
    assert not buffer.closed


# Messages the SDK reads (it takes 254 levels, and a NUL anywhere) but the REST API would refuse
# as a body: refused in its words, never handed to the SDK. A tool's arguments are its body,
# judged below `arguments` as the tool judges them.
REFUSED_AS_A_BODY = {
    "_meta nested 40 levels": (
        {"jsonrpc": "2.0", "id": 920, "method": "ping", "params": {"_meta": {"a": nested(40)}}},
        (400, -32700, "invalid_json", "JSON nested deeper than 32 levels."),
    ),
    "a member nested 300 levels": (
        {"jsonrpc": "2.0", "id": 921, "method": "ping", "x": nested(300)},
        (400, -32700, "invalid_json", "JSON nested deeper than 32 levels."),
    ),
    "a NUL in _meta": (
        {"jsonrpc": "2.0", "id": 922, "method": "ping", "params": {"_meta": {"a": "x\u0000"}}},
        (200, -32602, "invalid", f"params._meta.a: {NUL_MESSAGE}"),
    ),
    "a NUL in a resource's uri": (
        {"jsonrpc": "2.0", "id": 923, "method": "resources/read", "params": {"uri": "x\u0000"}},
        (200, -32602, "invalid", f"params.uri: {NUL_MESSAGE}"),
    ),
}


def message(document: dict[str, Any]) -> bytes:
    """The message's JSON, with its nested arrays (`nested`) as written, not as strings."""
    text = json.dumps(document)
    for depth in (40, 300):
        text = text.replace(json.dumps(nested(depth)), nested(depth))
    return text.encode()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("document", "refused"), REFUSED_AS_A_BODY.values(), ids=REFUSED_AS_A_BODY)
def test_http_a_message_refused_as_a_rest_body_would_be(bearer: str, document, refused) -> None:
    status, content = post(message(document), bearer)
    answer = json.loads(content)
    assert (status, answer["id"], answer["error"]["code"]) == (
        refused[0],
        document["id"],
        refused[1],
    )
    assert answer["error"]["data"]["code"] == refused[2]
    assert answer["error"]["data"]["error"] == refused[3]


@pytest.mark.parametrize(("document", "refused"), REFUSED_AS_A_BODY.values(), ids=REFUSED_AS_A_BODY)
def test_stdio_a_message_refused_as_a_rest_body_would_be(stdio: Stdio, document, refused) -> None:
    answer = stdio.answer(message(document))
    assert (answer["id"], answer["error"]["code"]) == (document["id"], refused[1])
    assert answer["error"]["data"]["error"] == refused[3]


def search_with(extra: str) -> bytes:
    return (
        '{"jsonrpc": "2.0", "id": 930, "method": "tools/call", "params": {"name": "search", '
        f'"arguments": {{"query": "x", "z": {extra}}}}}}}'
    ).encode()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("depth", [40, 300])
def test_http_a_tools_arguments_nested_too_deep_are_its_error(bearer: str, depth: int) -> None:
    """At 300 levels the SDK refused the message and the check of its arguments crashed here:
    no answer over stdio, a failed task group over HTTP."""
    status, content = post(search_with(nested(depth)), bearer)
    assert status == 200
    body = tool_refusal(json.loads(content))
    assert body == {"error": "JSON nested deeper than 32 levels.", "code": "invalid_json"}


@pytest.mark.parametrize("depth", [40, 300])
def test_stdio_a_tools_arguments_nested_too_deep_are_its_error(stdio: Stdio, depth: int) -> None:
    body = tool_refusal(stdio.answer(search_with(nested(depth))))
    assert body == {"error": "JSON nested deeper than 32 levels.", "code": "invalid_json"}


def test_stdio_arguments_nested_32_levels_below_arguments_are_read(stdio: Stdio) -> None:
    """As a REST body nested 32 levels is: the envelope around them does not count."""
    source = f'{{"a": {nested(30)}}}'  # source, a, then 30 arrays: 32 levels
    line = (
        '{"jsonrpc": "2.0", "id": 931, "method": "tools/call", "params": {"name": "add_drawer", '
        '"arguments": {"wing": "alpha", "room": "deep", "content": "Nested thirty levels.", '
        f'"source": {source}}}}}}}'
    ).encode()
    answer = stdio.answer(line)
    assert answer["result"]["isError"] is False


TOOLS_LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "headers",
    [
        pytest.param(((b"mcp-protocol-version", b"1999-01-01"),), id="unknown-version"),
        pytest.param(((b"mcp-protocol-version", b"garbage"),), id="garbage-version"),
        pytest.param(
            ((b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call")),
            id="another-method-named",
        ),
    ],
)
def test_http_the_sdks_refusal_of_a_header_carries_a_rest_body(bearer: str, headers) -> None:
    """A helper's trial: the SDK's JSON-RPC error for a bad protocol-version header had no
    `data`, where every other refusal's data is the REST API's body with its code."""
    status, content = post(TOOLS_LIST, bearer, headers=headers)
    error = json.loads(content)["error"]
    assert status == 400
    assert error["data"]["code"] == "invalid"
    assert error["data"]["error"] == error["message"]
