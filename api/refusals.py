"""The answer to a request an HTTP server refuses before any application reads it: gunicorn's
own refusals (config/gunicorn.py) and uvicorn's (`api.mcp_server.protocol`). Every refusal of
outside input is `{"error", "code"}` JSON, with the status's own reason phrase.

No Django here: gunicorn's configuration imports it before Django is set up.
"""

from __future__ import annotations

import contextlib
import json
from http import HTTPStatus

REFUSAL_CODES = {
    400: "invalid",
    403: "permission_denied",
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
REFUSAL_MESSAGE_CHARS = 200  # a server's message may quote the request: a bounded part of it


def refusal(status: int, reason: str, message: str) -> tuple[str, bytes]:
    """The reason phrase to send (the status's own where it has one: gunicorn gives "Bad
    Request" with its 501) and the JSON body."""
    with contextlib.suppress(ValueError):
        reason = HTTPStatus(status).phrase
    text = f"{reason}: {message[:REFUSAL_MESSAGE_CHARS]}" if message else reason
    code = REFUSAL_CODES.get(status, "server_error")
    return reason, json.dumps({"error": text, "code": code}).encode()  # ASCII: escapes the rest
