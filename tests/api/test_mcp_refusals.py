"""The MCP process as the Procfile starts it refuses a request it cannot parse in the API's JSON,
as gunicorn does (tests/deploy): raw bytes over a real socket, before any app could read them."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.mcp_support import procfile_mcp
from tests.api.test_mcp import palace  # noqa: F401 - a module fixture
from tests.raw_http import exchange


@pytest.fixture(scope="module")
def mcp_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the MCP process writes on stderr (its log)."""
    return tmp_path_factory.mktemp("mcp_log") / "stderr.log"


@pytest.fixture(scope="module")
def mcp_port(palace: dict[str, Any], mcp_log: Path) -> Iterator[int]:  # noqa: F811
    with procfile_mcp(palace["env"], mcp_log) as port:
        yield port


def answer(port: int, raw: bytes) -> tuple[str, dict[str, str], bytes]:
    status, headers, body = exchange("127.0.0.1", port, raw, timeout=10)
    return status, {name.lower(): value for name, value in headers.items()}, body


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"GARBAGE\r\n\r\n", id="request-line"),
        pytest.param(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon\r\n\r\n", id="header"),
        pytest.param(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-\x00: 1\r\n\r\n", id="nul"),
        pytest.param(b"POST /mcp HTTP/1.1\r\nContent-Length: 1\r\n\r\n", id="no-host"),
    ],
)
def test_an_unparseable_request_is_refused_in_json(mcp_port, raw):
    status, headers, body = answer(mcp_port, raw)
    assert status == "HTTP/1.1 400 Bad Request"
    assert headers["content-type"] == "application/json"
    assert int(headers["content-length"]) == len(body)
    refused = json.loads(body)
    assert refused["code"] == "invalid"
    assert refused["error"].startswith("Bad Request: ")


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        pytest.param(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "HTTP/2.0", id="http2-preface"),
        pytest.param(b"GET /healthz HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n", "HTTP/9.9", id="9.9"),
        pytest.param(b"GET * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "GET *", id="asterisk"),
        pytest.param(
            b"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "Content-Length and Transfer-Encoding",
            id="length-and-coding",
        ),
        pytest.param(
            b"GET 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "127.0.0.1:80", id="authority"
        ),
    ],
)
def test_a_request_gunicorn_refuses_is_refused_here_too(mcp_port, raw, said):
    """h11 parses them, and uvicorn handed them to the app, which redirected them (301, 302)."""
    status, headers, body = answer(mcp_port, raw)
    assert status == "HTTP/1.1 400 Bad Request"
    assert headers["content-type"] == "application/json"
    assert headers["connection"] == "close"
    refused = json.loads(body)
    assert refused["code"] == "invalid"
    assert said in refused["error"]


PAD = b"X-Pad: " + b"a" * 10_000 + b"\r\n"


@pytest.mark.parametrize(
    ("raw", "status", "code"),
    [
        pytest.param(
            b"GET /healthz?q=" + b"a" * 5000 + b" HTTP/1.1\r\n", 414, "request_too_large", id="line"
        ),
        pytest.param(
            b"GET /healthz HTTP/1.1\r\n" + b"X-Pad: 1\r\n" * 120,
            431,
            "request_too_large",
            id="fields",
        ),
        pytest.param(b"GET /healthz HTTP/1.1\r\n" + PAD, 431, "request_too_large", id="field-size"),
    ],
)
def test_a_head_past_gunicorn_s_limits_is_refused_as_gunicorn_refuses_it(
    mcp_port, raw, status, code
):
    """h11 limits only a head that arrives unfinished: one sent whole, of any size, was served
    (a 100,000-byte header: /healthz 200). The same limits as gunicorn's (tests/deploy)."""
    answered, headers, body = answer(mcp_port, raw + b"Host: 127.0.0.1\r\n\r\n")
    assert answered.split()[1] == str(status)
    assert headers["content-type"] == "application/json"
    assert json.loads(body)["code"] == code


def test_a_head_within_gunicorn_s_limits_is_served(mcp_port):
    request = b"GET /healthz?q=" + b"a" * 3000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    request += b"X-Pad: 1\r\n" * 90 + b"X-Long: " + b"a" * 8000 + b"\r\nConnection: close\r\n\r\n"
    assert answer(mcp_port, request)[0] == "HTTP/1.1 200 OK"


def test_a_raw_utf_8_url_is_refused_quoting_it_as_written(mcp_port):
    request = "GET /healthz?q=数据库 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    status, _, body = answer(mcp_port, request)
    assert status == "HTTP/1.1 400 Bad Request"
    assert "q=数据库" in json.loads(body)["error"]


def test_the_asterisk_form_of_options_is_not_refused(mcp_port):
    """Valid HTTP: handed to the app, which has no route for it."""
    request = b"OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    status, _, _ = answer(mcp_port, request)
    assert status == "HTTP/1.1 404 Not Found"


def test_headers_past_the_limit_are_refused_as_too_large(mcp_port):
    """h11 holds at most 16 KiB of an unfinished request head: more, still unfinished, is 431."""
    unfinished = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + b"a" * 40_000
    status, headers, body = answer(mcp_port, unfinished)
    assert status == "HTTP/1.1 431 Request Header Fields Too Large"
    assert headers["content-type"] == "application/json"
    assert json.loads(body)["code"] == "request_too_large"


def test_a_transfer_coding_it_cannot_read_is_refused_as_unsupported(mcp_port):
    request = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip\r\n\r\n"
    status, _, body = answer(mcp_port, request)
    assert status == "HTTP/1.1 501 Not Implemented"
    assert json.loads(body)["code"] == "unsupported_request"


def test_a_broken_chunk_is_refused_and_logs_no_error(mcp_port, mcp_log):
    """The app had started on the request when its body broke: its own answer is dropped, not
    an error logged with a traceback for any client to cause."""
    request = (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
        b"Content-Type: application/json\r\n\r\nzz\r\n"
    )
    status, _, body = answer(mcp_port, request)
    assert status == "HTTP/1.1 400 Bad Request"
    assert json.loads(body)["code"] == "invalid"
    time.sleep(0.5)  # the app's task ends after the answer
    assert "Exception in ASGI application" not in mcp_log.read_text()


def post(port: int, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("POST", path, body, headers)
    response = connection.getresponse()
    answered = (response.status, response.getheader("Content-Type"), json.loads(response.read()))
    connection.close()
    return answered[0], {"content_type": answered[1], **answered[2]}


def test_no_such_path_under_mcp_is_a_json_404(mcp_port):
    status, answer = post(mcp_port, "/mcp/x", b"{}", {"Content-Type": "application/json"})
    assert (status, answer["content_type"], answer["code"]) == (
        404,
        "application/json",
        "not_found",
    )


def test_a_message_that_is_not_json_by_its_type_is_a_json_415(mcp_port, palace):  # noqa: F811
    headers = {"Content-Type": "text/plain", "Authorization": f"Bearer {palace['key']}"}
    status, answer = post(mcp_port, "/mcp", b"{}", headers)
    assert (status, answer["code"]) == (415, "unsupported_media_type")


def test_a_message_over_the_limit_is_a_json_413(mcp_port, palace):  # noqa: F811
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {palace['key']}"}
    status, answer = post(mcp_port, "/mcp", b" " * (4 * 1024 * 1024 + 1), headers)
    assert (status, answer["content_type"], answer["code"]) == (
        413,
        "application/json",
        "content_too_large",
    )


def test_a_message_that_takes_no_json_is_a_json_406(mcp_port, palace):  # noqa: F811
    """The SDK's own 406 (a JSON-RPC error without a code), answered as REST's."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "Authorization": f"Bearer {palace['key']}",
    }
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    status, answer = post(mcp_port, "/mcp", ping, headers)
    assert (status, answer["content_type"], answer["code"]) == (
        406,
        "application/json",
        "not_acceptable",
    )


def test_a_delete_is_a_json_405(mcp_port, palace):  # noqa: F811
    connection = http.client.HTTPConnection("127.0.0.1", mcp_port, timeout=30)
    connection.request("DELETE", "/mcp", headers={"Authorization": f"Bearer {palace['key']}"})
    response = connection.getresponse()
    answered = (response.status, response.getheader("Allow"), json.loads(response.read()))
    connection.close()
    assert answered[:2] == (405, "POST")
    assert answered[2]["code"] == "method_not_allowed"


def test_a_chunked_message_over_the_limit_is_a_json_413(mcp_port, palace):  # noqa: F811
    """A body that does not state its length is counted as it comes, and refused as one that
    does. (4 MiB, then one byte: the server has read all that was sent when it answers, so it
    closes without resetting the connection; no last chunk is sent.)"""
    mebibyte = b" " * (1024 * 1024)
    body = b"100000\r\n%s\r\n" % mebibyte * 4 + b"1\r\n \r\n"
    head = (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {palace['key']}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    status, headers, answered = answer(mcp_port, head.encode() + body)
    assert status.split()[1] == "413"
    assert headers["content-type"] == "application/json"
    assert json.loads(answered)["code"] == "content_too_large"


@pytest.mark.parametrize(
    ("target", "status"),
    [
        ("http://127.0.0.1/mcp", "HTTP/1.1 401 Unauthorized"),
        ("http://127.0.0.1/healthz", "HTTP/1.1 200 OK"),
    ],
    ids=["mcp", "health"],
)
def test_a_target_in_absolute_form_is_routed_by_its_path(mcp_port, target, status):
    """`GET http://host/path HTTP/1.1` (HTTP/1.1 servers must accept it): routed as /path, not
    Django's HTML 404 for a path it has no route for."""
    request = f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    answered, headers, _ = answer(mcp_port, request.encode())
    assert answered == status
    assert headers["content-type"].startswith("application/json")


@pytest.mark.parametrize(
    ("target", "host", "status"),
    [
        ("http://evil.example/healthz", "127.0.0.1", "HTTP/1.1 400 Bad Request"),
        ("http://evil.example/mcp", "127.0.0.1", "HTTP/1.1 400 Bad Request"),
        ("http://127.0.0.1/healthz", "evil.example", "HTTP/1.1 200 OK"),
    ],
    ids=["another-host", "another-host-mcp", "an-allowed-host"],
)
def test_a_target_in_absolute_form_names_the_host_its_header_does_not(
    mcp_port, target, host, status
):
    """The target's host wins over the Host header (RFC 9112, 3.2.2): a target naming another
    host was served, the allowed hosts checked against the header alone (the attack trial)."""
    request = f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    answered, headers, body = answer(mcp_port, request.encode())
    assert answered == status
    assert headers["content-type"].startswith("application/json")
    if answered.endswith("400 Bad Request"):
        assert "evil.example" in json.loads(body)["error"]


def test_the_process_serves_the_app_s_health_route_beside_mcp(mcp_port):
    connection = http.client.HTTPConnection("127.0.0.1", mcp_port, timeout=10)
    connection.request("GET", "/healthz")
    assert connection.getresponse().status == 200
    connection.close()


def test_a_parseable_request_still_reaches_the_app(mcp_port):
    connection = http.client.HTTPConnection("127.0.0.1", mcp_port, timeout=10)
    connection.request("GET", "/mcp")
    response = connection.getresponse()
    assert response.status == 401
    assert json.loads(response.read())["code"] == "not_authenticated"
    connection.close()


def test_an_asgi_server_s_http_2_and_a_missing_raw_path_are_served():
    """ASGI names HTTP/2 "2" and allows `raw_path` to be None: neither is refused."""
    from config.asgi import unservable

    scope = {"type": "http", "method": "GET", "path": "/healthz", "raw_path": None}
    assert unservable({**scope, "http_version": "2"}) is None
    assert unservable({**scope, "http_version": "1.1"}) is None
    assert unservable({**scope, "http_version": "2.0"}) == (400, "Invalid HTTP Version: HTTP/2.0")


def test_a_target_in_absolute_form_without_a_raw_path_names_its_host():
    """ASGI allows `raw_path` to be None: the target's host is read off the path then."""
    from config.asgi import in_origin_form

    scope = {
        "type": "http",
        "path": "http://localhost/healthz",
        "raw_path": None,
        "headers": [(b"host", b"evil.example")],
    }
    origin_form = in_origin_form(scope)
    assert (origin_form["path"], origin_form["raw_path"]) == ("/healthz", b"/healthz")
    assert origin_form["headers"] == [(b"host", b"localhost")]
