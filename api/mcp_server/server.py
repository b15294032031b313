"""The MCP server: Castellan's tools for agents, over stdio (`manage.py mcp_server`) or
streamable HTTP (`manage.py mcp_server --transport http`, and `/mcp` in `config.asgi`).

The tools are the REST API's routes for agents, on the same services, scopes and error codes;
there are no decision tools (deciding stays with curators). The wings and rooms are also
resources (`api.mcp_server.resources`). Tools are plain functions: the SDK
runs each on a worker thread, where Django's ORM may be used as in a request.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from typing import Any
from urllib.parse import urlsplit

import anyio
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send

from api.errors import body, unserved_host
from api.mcp_server import reads, writes
from api.mcp_server.calls import error_answer, release_old_connections, signed_in
from api.mcp_server.coded import coded_errors
from api.mcp_server.resources import CastellanServer, add_resources
from api.mcp_server.screen import AnswerUnreadable
from api.mcp_server.shown import as_text

NAME = "castellan"


def server_version() -> str:
    """Castellan's own version (pyproject's, as installed), for `serverInfo.version`."""
    try:
        return package_version(NAME)
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"


INSTRUCTIONS = (
    "Castellan keeps your long-term memory free of duplicates without destroying a distinct "
    "fact. Memories are drawers in rooms of wings. Start with list_wings: it names the wings your "
    "key may use (every_wing: whether a write may make a new one). Write with add_drawer (safe to "
    "retry: an exact copy is not stored twice, a near-duplicate is stored and linked); use "
    "check_duplicate to ask without writing; recall with search (a drawer's content is cut to "
    "1,000 characters in lists: get_drawer reads one whole). Errors are JSON: {error, code}; "
    "out_of_scope names the wings your key reaches (details.wings)."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# A write is idempotent: the same memory again returns the drawer already stored.
WRITES = ToolAnnotations(read_only_hint=False, idempotent_hint=True, open_world_hint=False)
ENDS = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

TOOLS: list[tuple[Callable[..., Any], ToolAnnotations]] = [
    (writes.add_drawer, WRITES),
    (writes.check_duplicate, READ_ONLY),
    (writes.write_diary, WRITES),
    (writes.write_checkpoint, WRITES),
    (writes.record_mention, WRITES),
    (writes.supersede_drawer, ENDS),
    (reads.search, READ_ONLY),
    (reads.list_wings, READ_ONLY),
    (reads.list_rooms, READ_ONLY),
    (reads.list_drawers, READ_ONLY),
    (reads.get_drawer, READ_ONLY),
    (reads.list_duplicates, READ_ONLY),
]


def build_server() -> MCPServer:
    server = CastellanServer(
        NAME,
        instructions=INSTRUCTIONS,
        version=server_version(),
        log_level="WARNING",
        middleware=[coded_errors],
    )
    for function, hints in TOOLS:
        # The docstring without its indentation (the SDK takes it as written).
        description = inspect.cleandoc(function.__doc__ or "")
        # Its answer sent once, as JSON text (`api.mcp_server.shown`).
        server.add_tool(
            as_text(function),
            description=description,
            annotations=hints,
            structured_output=False,
        )
    add_resources(server)
    return server


BAD_ORIGIN = "Requests from that Origin are not answered (ALLOWED_HOSTS)."


def host_allowed(host: str) -> bool:
    """Django's rule for the Host header (`HttpRequest.get_host`: `.example.com` covers its
    subdomains, case and a trailing dot do not count), so /mcp answers the hosts the REST API
    answers."""
    domain, _ = split_domain_port(host)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)


def origin_allowed(origin: str | None) -> bool:
    """A browser's page may call /mcp only from a host the app answers for (the guard against
    DNS rebinding the SDK offers, by Django's rule); a client that is no browser sends none."""
    return origin is None or host_allowed(urlsplit(origin).netloc)


def http_app(server: MCPServer | None = None) -> Starlette:
    """Streamable HTTP at `/mcp`, stateless (every request stands alone, so any web process can
    answer it) with JSON answers."""
    return (server or build_server()).streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        # Host and Origin are checked in front of it (`RequireBearer`), by Django's rule: the
        # SDK's own check knows no `.example.com` and answers 421 in plain text.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )


def key_refusal(headers: dict[str, str]) -> tuple[int, dict[str, Any]] | None:
    """The REST API's answer to a request whose key does not sign in (401, or 503 for a busy
    database), or None. Every request is held to it, `initialize` and the lists too, as every
    REST route is: a wrong key learns nothing, and a client learns at its first request, not at
    its first tool call, that its key is wrong."""
    release_old_connections()
    try:
        signed_in(headers)
    except Exception as exc:  # every failure is an answer with a code (a crash: logged)
        return error_answer(exc)
    finally:
        release_old_connections()
    return None


MCP_PATHS = ("/mcp", "/mcp/")
NO_SUCH_PATH = "No MCP endpoint at that path: POST each message to /mcp."
NOT_JSON_BODY = body(
    "Send each message as `Content-Type: application/json`.", "unsupported_media_type"
)


def is_json(content_type: str) -> bool:
    return content_type.partition(";")[0].strip().lower() == "application/json"


# The answer to a GET, the SSE stream a server sends its own messages on: 405, which the
# protocol allows a server that offers no stream. The SDK would hold the stream open, and a
# stateless server never writes to it, so a client would wait for nothing.
NO_STREAM = body(
    "This server is stateless and offers no stream: POST each request.", "method_not_allowed"
)
# A DELETE ends a session, which a stateless server has none of (the SDK's 405 had no code);
# any other method but POST is refused as REST refuses it.
NO_SESSION = body(
    "This server is stateless: there is no session to end. POST each request.",
    "method_not_allowed",
)
ONLY_POST = body("POST each message to /mcp.", "method_not_allowed")
REFUSED_METHODS = {"GET": NO_STREAM, "DELETE": NO_SESSION}


async def respond(send: Send, status: int, answer: dict[str, Any]) -> None:
    """A JSON error answer with the headers REST gives its status."""
    headers = [(b"content-type", b"application/json")]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    if status == 405:
        headers.append((b"allow", b"POST"))
    wait = answer.get("details", {}).get("retry_after")
    if wait is not None:
        headers.append((b"retry-after", str(wait).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(answer).encode()})


class RequireBearer:
    """Signs every request in before the SDK sees it, as REST signs in before the method: no
    `Authorization` header is 401 at once, a key that does not sign in 401 with the REST API's
    body (`key_refusal`); then any method but POST is answered 405 (a GET `NO_STREAM`, a DELETE
    `NO_SESSION`), a POST not typed JSON 415, and any other goes to the SDK's app, a body it
    cannot read answered on the way and the SDK's own refusals put in JSON with their code
    (`screen.AnswerUnreadable`: a body too large 413, no JSON accepted 406).
    A path under /mcp other than /mcp is 404 before any of it. Each tool call signs in again,
    as it does over stdio (`api.mcp_server.calls`)."""

    def __init__(self, app: Starlette) -> None:
        self.app = app
        self.screened = AnswerUnreadable(app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope.get("headers", [])
        }
        if not host_allowed(headers.get("host", "")):  # as Django refuses it
            await respond(send, 400, body(unserved_host(headers.get("host", "")), "invalid"))
            return
        if not origin_allowed(headers.get("origin")):
            await respond(send, 403, body(BAD_ORIGIN, "permission_denied"))
            return
        if scope.get("path") not in MCP_PATHS:  # the SDK's own 404 is plain text
            await respond(send, 404, body(NO_SUCH_PATH, "not_found"))
            return
        if "authorization" not in headers:
            missing = body("Send `Authorization: Bearer <key>`.", "not_authenticated")
            await respond(send, 401, missing)
            return
        refused = await anyio.to_thread.run_sync(key_refusal, headers)
        if refused is not None:
            await respond(send, *refused)
        elif scope.get("method") != "POST":
            await respond(send, 405, REFUSED_METHODS.get(scope.get("method", ""), ONLY_POST))
        elif not is_json(headers.get("content-type", "")):
            await respond(send, 415, NOT_JSON_BODY)  # as REST refuses it; the SDK's is plain
        else:
            await self.screened(scope, receive, send)
