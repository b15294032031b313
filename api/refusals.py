"""The answer to a request an HTTP server refuses before any application reads it: gunicorn's
own refusals (config/gunicorn.py) and uvicorn's (`api.mcp_server.protocol`). Every refusal of
outside input is `{"error", "code"}` JSON, with the status's own reason phrase.

No Django here: gunicorn's configuration imports it before Django is set up.
"""

from __future__ import annotations

import contextlib
import json
import re
from http import HTTPStatus
from urllib.parse import SplitResult, urlsplit

REFUSAL_CODES = {
    400: "invalid",
    403: "permission_denied",
    408: "request_timeout",
    414: "request_too_large",
    417: "unsupported_request",
    431: "request_too_large",
    501: "unsupported_request",
}
# gunicorn's limits on a request's head (its defaults, which config/gunicorn.py keeps): the
# MCP process holds a request to them too (config.asgi), where h11 limits only a head that
# arrives unfinished (16 KiB).
REQUEST_LINE_MAX = 4094
HEADER_FIELDS_MAX = 100
HEADER_FIELD_MAX = 8190
_ESCAPED_BYTE = re.compile(r"\\x([0-9a-fA-F]{2})")
REFUSAL_MESSAGE_CHARS = 200  # a server's message may quote the request: a bounded part of it


def absolute_form(target: str) -> SplitResult | None:
    """A request target in absolute form (`http://host/path`, any case of the scheme), split;
    None for any other form. Its host is the request's, whatever the Host header says (RFC
    9112, 3.2.2): both servers' entry points read it so (config.wsgi, config.asgi)."""
    if not target[:8].lower().startswith(("http://", "https://")):
        return None
    return urlsplit(target)


def refusal(status: int, reason: str, message: str) -> tuple[str, bytes]:
    """The reason phrase to send (the status's own where it has one: gunicorn gives "Bad
    Request" with its 501) and the JSON body."""
    with contextlib.suppress(ValueError):
        reason = HTTPStatus(status).phrase
    message = as_sent(message)[:REFUSAL_MESSAGE_CHARS]
    text = f"{reason}: {message}" if message else reason
    code = REFUSAL_CODES.get(status, "server_error")
    return reason, json.dumps({"error": text, "code": code}).encode()  # ASCII: escapes the rest


def refusal_headers(body: bytes) -> list[tuple[bytes, bytes]]:
    """The headers of a refusal's answer (`refusal`'s body), which closes the connection."""
    return [
        (b"content-type", b"application/json"),
        (b"x-content-type-options", b"nosniff"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]


def as_sent(message: str) -> str:
    """A message quoting the request's bytes as the servers read them (each byte a character,
    latin-1, the unprintable ones written `\\xNN`, as gunicorn's and h11's messages quote
    them), with UTF-8 read as UTF-8: a raw "数据库" in a URL is quoted as itself, not as
    "æ\\x95°æ\\x8d®åº\\x93". A message whose bytes are no UTF-8 stays as it was."""
    read = _ESCAPED_BYTE.sub(lambda escape: chr(int(escape.group(1), 16)), message)
    try:
        return read.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return message
