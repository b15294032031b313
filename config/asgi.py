"""The ASGI entry point: Django, with Castellan's MCP server (streamable HTTP) at `/mcp`.

`uvicorn config.asgi:application` serves both. The Procfile's `web` process stays on gunicorn's
threaded WSGI workers (every view is synchronous; the deploy test, the per-worker metrics and the
load bench hold that serving); production runs the same MCP app in its own `mcp` process
(`manage.py mcp_server --transport http`, which also refuses unparseable requests in JSON) and
the proxy in front sends `/mcp` to it (README "Agents over MCP"). The MCP app also receives the
lifespan events: its session manager must run for it to answer.
"""

import os
from typing import Any
from urllib.parse import urlsplit

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_asgi_application()

from api.mcp_server.server import RequireBearer, http_app  # noqa: E402 - after Django's setup
from api.refusals import (  # noqa: E402
    HEADER_FIELD_MAX,
    HEADER_FIELDS_MAX,
    REQUEST_LINE_MAX,
    absolute_form,
    refusal,
    refusal_headers,
)

mcp_application = RequireBearer(http_app())


def in_origin_form(scope: Any) -> Any:
    """The scope of a request whose target came in absolute form (`POST http://host/mcp`, which
    an HTTP/1.1 server must accept; uvicorn hands the whole URL on as the path) with its path
    alone, as gunicorn gives it: routed by its path, not answered 404; and the host it names as
    its Host header, which the target overrides (RFC 9112, 3.2.2; `config.wsgi` reads gunicorn's
    the same): the Host header was what the allowed hosts were checked against."""
    path = scope.get("path", "")
    if scope["type"] != "http" or absolute_form(path) is None:
        return scope
    target = urlsplit((scope.get("raw_path") or path.encode()).decode("latin-1"))  # may be None
    headers = [(name, value) for name, value in scope.get("headers", []) if name != b"host"]
    return {
        **scope,
        "path": urlsplit(path).path or "/",
        "raw_path": target.path.encode("latin-1") or b"/",
        "headers": [(b"host", target.netloc.encode("latin-1")), *headers],
    }


def unservable(scope: Any) -> tuple[int, str] | None:
    """What gunicorn's parser refuses and h11 lets through, as gunicorn answers it: an HTTP
    version other than 1.x (`PRI * HTTP/2.0`, the HTTP/2 preface, or `HTTP/9.9`; an ASGI server
    that speaks HTTP/2 or 3 names them "2" and "3", which are served), the asterisk
    form with a method other than OPTIONS, a target in authority form (`host:port`) with a
    method other than CONNECT (uvicorn handed them to the app, which redirected them), a body
    with both a length and a transfer coding (h11 read it chunked), and a head past gunicorn's
    limits (`api.refusals`; h11 takes a head of any size that arrives
    whole). The status and the message."""
    if scope["type"] != "http":
        return None
    version, method, path = scope.get("http_version", "1.1"), scope["method"], scope["path"]
    if version not in ("1.0", "1.1", "2", "3"):  # ASGI's names; h11 hands "2.0" on as it came
        return 400, f"Invalid HTTP Version: HTTP/{version}"
    if (path == "*" and method != "OPTIONS") or (
        path != "*"
        and not path.startswith("/")
        and absolute_form(path) is None
        and method != "CONNECT"
    ):
        return 400, f"Invalid HTTP request line: {method} {path}"
    query = scope.get("query_string", b"")
    raw_path = scope.get("raw_path") or path.encode()  # ASGI allows None
    target = len(raw_path) + (1 + len(query) if query else 0)
    if len(method) + 1 + target + 1 + len("HTTP/1.1") > REQUEST_LINE_MAX:
        return 414, f"the request line is over {REQUEST_LINE_MAX} bytes"
    headers = scope.get("headers", [])
    names = {name.lower() for name, _ in headers}
    if {b"content-length", b"transfer-encoding"} <= names:  # a smuggler's: whose length?
        return 400, "Content-Length and Transfer-Encoding together"
    if len(headers) > HEADER_FIELDS_MAX:
        return 431, f"more than {HEADER_FIELDS_MAX} header fields"
    if any(len(name) + len(value) + 4 > HEADER_FIELD_MAX for name, value in headers):
        return 431, f"a header field is over {HEADER_FIELD_MAX} bytes"
    return None


async def refuse(send: Any, status: int, message: str) -> None:
    _, body = refusal(status, "Bad Request", message)
    headers = refusal_headers(body)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


# Any: Django's handler and Starlette's apps spell the same ASGI callables differently.
async def application(scope: Any, receive: Any, send: Any) -> None:
    refused = unservable(scope)
    if refused is not None:
        await refuse(send, *refused)
        return
    scope = in_origin_form(scope)
    path = scope.get("path", "")
    if scope["type"] == "lifespan" or path == "/mcp" or path.startswith("/mcp/"):
        await mcp_application(scope, receive, send)
    else:
        await django_application(scope, receive, send)
