"""A GET on `/mcp` (the stream the protocol lets a client open) is answered at once: a wrong key
401 with the REST API's error body, a good one 405, since a stateless server offers no stream
(the SDK would hold it open and never write to it)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from api.mcp_server.server import RequireBearer, http_app

# The key is read on a worker thread, with a connection of its own: it must be committed.
pytestmark = pytest.mark.django_db(transaction=True)


def get(authorization: str) -> tuple[int, dict[str, str], bytes]:
    """A GET on the ASGI app, as uvicorn would make it; a hang fails the test."""
    app = RequireBearer(http_app())
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/mcp",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"accept", b"text/event-stream"),
            (b"authorization", authorization.encode()),
        ],
    }

    async def run() -> None:
        with anyio.fail_after(10):
            await app(scope, receive, send)

    anyio.run(run)
    start, content = sent[0], sent[1]
    headers = {name.decode(): value.decode() for name, value in start["headers"]}
    return start["status"], headers, content["body"]


@pytest.mark.parametrize("authorization", ["Bearer garbage", "Bearer nope.not-a-key", "x"])
def test_a_get_with_a_wrong_key_is_refused_at_once(settings, authorization) -> None:
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    status, headers, _ = get(authorization)
    assert status == 401
    assert headers["content-type"] == "application/json"
    assert headers["www-authenticate"] == "Bearer"


def test_a_wrong_key_is_authentication_failed(settings) -> None:
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    _, _, content = get("Bearer nope.not-a-key")
    assert json.loads(content)["code"] == "authentication_failed"


def test_a_get_with_a_good_key_is_405_not_a_stream(bearer) -> None:
    status, headers, content = get(bearer)
    assert status == 405
    assert headers["allow"] == "POST"
    assert json.loads(content)["code"] == "method_not_allowed"
