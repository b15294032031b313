"""The MCP process as the Procfile starts it holds a request's head and body to deadlines, as
gunicorn does (config/http_deadlines.py, tests/deploy): a partial head, and a body of 1 of 100
bytes, had stayed open unanswered for 150 s (a trial: a file descriptor each). Raw bytes over
real sockets, with the deadlines shortened (`MCP_HEAD_TIMEOUT`, `MCP_BODY_TIMEOUT`)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.mcp_support import procfile_mcp
from tests.api.test_mcp import palace  # noqa: F401 - a module fixture
from tests.raw_http import read_answer

HEAD_SECONDS = 2
BODY_SECONDS = 2
KEEP_ALIVE_SECONDS = 5  # uvicorn's `timeout_keep_alive`, which the process keeps


@pytest.fixture(scope="module")
def mcp_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp_deadlines_log") / "stderr.log"


@pytest.fixture(scope="module")
def mcp_port(palace: dict[str, Any], mcp_log: Path) -> Iterator[int]:  # noqa: F811
    timeouts = {"MCP_HEAD_TIMEOUT": str(HEAD_SECONDS), "MCP_BODY_TIMEOUT": str(BODY_SECONDS)}
    with procfile_mcp(palace["env"], mcp_log, **timeouts) as port:
        yield port


def sent(port: int, raw: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=15)
    sock.sendall(raw)
    return sock


def answered(sock: socket.socket) -> tuple[str, dict[str, str], bytes, float]:
    """The answer, read until the server closes, and the seconds it took."""
    started = time.monotonic()
    with sock:
        status, headers, body = read_answer(sock)
    return status, {k.lower(): v for k, v in headers.items()}, body, time.monotonic() - started


def logged(log: Path, text: str) -> bool:
    """Whether the process logged `text` (waiting a little: its app may end after the answer)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if text in log.read_text():
            return True
        time.sleep(0.1)
    return False


def body_head(key: str, length: int = 100) -> bytes:
    return (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
        "Content-Type: application/json\r\nAccept: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def test_a_head_cut_short_is_answered_408_at_its_deadline_and_closed(mcp_port, mcp_log):
    sock = sent(mcp_port, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    status, headers, body, seconds = answered(sock)
    assert status == "HTTP/1.1 408 Request Timeout"
    assert (headers["content-type"], headers["connection"]) == ("application/json", "close")
    assert json.loads(body) == {
        "error": f"Request Timeout: the request's head did not arrive within {HEAD_SECONDS} "
        "seconds",
        "code": "request_timeout",
    }
    assert HEAD_SECONDS - 0.5 < seconds < HEAD_SECONDS + 3
    message = f"Closed a connection: the request's head did not arrive within {HEAD_SECONDS}"
    assert logged(mcp_log, message)


def test_a_head_sent_in_pieces_within_its_deadline_is_served(mcp_port):
    """The deadline is the whole head's, from its first bytes, not each read's."""
    sock = sent(mcp_port, b"GET /healthz HTTP/1.1\r\n")
    time.sleep(HEAD_SECONDS / 2)
    sock.sendall(b"Host: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert answered(sock)[0] == "HTTP/1.1 200 OK"


def test_a_body_cut_short_is_answered_400_at_its_deadline_and_closed(mcp_port, mcp_log, palace):  # noqa: F811
    sock = sent(mcp_port, body_head(palace["key"]) + b"{")  # 1 byte of 100
    status, headers, body, seconds = answered(sock)
    assert status == "HTTP/1.1 400 Bad Request"
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == {
        "error": f"The body could not be read: the whole body did not arrive within "
        f"{BODY_SECONDS} seconds of the request's head.",
        "code": "invalid",
    }
    assert BODY_SECONDS - 0.5 < seconds < BODY_SECONDS + 3
    assert logged(mcp_log, "did not arrive within 2 seconds of the request's head")


def test_a_connection_that_sends_nothing_is_closed(mcp_port):
    """As one idle between requests is, after uvicorn's `timeout_keep_alive`."""
    sock = socket.create_connection(("127.0.0.1", mcp_port), timeout=15)
    started = time.monotonic()
    with sock:
        assert sock.recv(1024) == b""
    assert time.monotonic() - started < KEEP_ALIVE_SECONDS + 3


def test_a_kept_alive_connection_s_next_head_has_its_own_deadline(mcp_port):
    sock = sent(mcp_port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    first = b""
    while not first.endswith(b'{"status": "ok"}'):  # the whole first answer
        first += sock.recv(65536)
    assert first.startswith(b"HTTP/1.1 200 OK")
    sock.sendall(b"GET /healthz HTTP/1.1\r\n")
    status, _, body, _ = answered(sock)
    assert status == "HTTP/1.1 408 Request Timeout"
    assert json.loads(body)["code"] == "request_timeout"


def test_other_requests_are_served_while_a_head_waits(mcp_port):
    waiting = sent(mcp_port, b"POST /mcp HTTP/1.1\r\n")
    started = time.monotonic()
    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    assert answered(sent(mcp_port, request))[0] == "HTTP/1.1 200 OK"
    assert time.monotonic() - started < 1
    waiting.close()


def test_a_body_its_client_closes_on_is_logged_as_cut_short(mcp_port, mcp_log, palace):  # noqa: F811
    """It was logged as a message that is not JSON (the part that came)."""
    key = palace["key"]
    sock = sent(mcp_port, body_head(key) + b'{"jsonrpc": "2.0", "id": 7, "method": "pi')
    time.sleep(0.3)  # the head read, the app waiting for the rest
    sock.close()
    assert logged(mcp_log, "an MCP message cut short was dropped")
    assert "is not JSON" not in mcp_log.read_text()


def test_a_body_its_client_half_closes_on_is_answered_cut_short(mcp_port, palace):  # noqa: F811
    """A client that shuts its side down (sends nothing more) still reads the answer."""
    sock = sent(mcp_port, body_head(palace["key"]) + b"{")
    sock.shutdown(socket.SHUT_WR)
    status, _, body, seconds = answered(sock)
    assert status == "HTTP/1.1 400 Bad Request"
    assert json.loads(body) == {
        "error": "The body could not be read: the connection closed before all of it arrived.",
        "code": "invalid",
    }
    assert seconds < 1
