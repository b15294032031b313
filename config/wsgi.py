"""The WSGI entry point (gunicorn's `wsgi_app`, runserver's `WSGI_APPLICATION`): Django, with the
request's host read as HTTP/1.1 has it where gunicorn hands on what Django would misread:

- A target in absolute form (`GET http://other.example/api/ HTTP/1.1`) names the request's host,
  and its Host header is ignored (RFC 9112, 3.2.2). gunicorn leaves the header as sent, so Django
  checked `ALLOWED_HOSTS` against a host the request line contradicts, and served it.
- An HTTP/1.1 request without a Host header is refused 400 (RFC 9112, 3.2: a server must), in
  JSON as gunicorn's own refusals are; gunicorn handed it on and Django took the server's own
  name for the host. The MCP process refuses both the same (h11, and `config.asgi`).

And a body is read to its Content-Length or not at all (`WholeBody`).
"""

import os
from collections.abc import Callable, Iterable
from typing import Any

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_wsgi_application()

from api.refusals import absolute_form, refusal, refusal_headers  # noqa: E402 - after Django's setup

MISSING_HOST = "Missing Host header (an HTTP/1.1 request must name its host)"


class WholeBody:
    """`wsgi.input`, which ends where its Content-Length says or fails. gunicorn's reader (and
    wsgiref's) ends at the end of the connection: a client that half-closed its side
    (`shutdown(SHUT_WR)`) after part of its body had that part read as the whole body, and a part
    that is valid JSON was stored. An end before Content-Length raises OSError here, as a reset
    connection's read does, which Django makes `UnreadablePostError`: 400 `invalid` (the API's
    `exception_handler`, the console's `config.middleware`), nothing written."""

    def __init__(self, stream: Any, length: int) -> None:
        self.stream = stream
        self.left = length

    def read(self, size: int | None = -1) -> bytes:
        wanted = self.left if size is None or size < 0 else min(size, self.left)
        chunks = []
        while wanted > 0:  # a short read is the end only once a read brings nothing
            chunk = self.stream.read(wanted)
            if not chunk:
                raise self.cut_short()
            chunks.append(chunk)
            wanted -= len(chunk)
            self.left -= len(chunk)
        return b"".join(chunks)

    def readline(self, size: int | None = -1) -> bytes:
        wanted = self.left if size is None or size < 0 else min(size, self.left)
        if wanted == 0:
            return b""
        line = self.stream.readline(wanted)
        self.left -= len(line)
        if len(line) < wanted and not line.endswith(b"\n"):
            raise self.cut_short()
        return line

    def cut_short(self) -> OSError:
        return OSError(f"the body ended {self.left} bytes short of its Content-Length")


def content_length(environ: dict[str, Any]) -> int:
    raw = environ.get("CONTENT_LENGTH") or ""
    return int(raw) if raw.isascii() and raw.isdigit() else 0


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    if environ.get("SERVER_PROTOCOL") == "HTTP/1.1" and "HTTP_HOST" not in environ:
        reason, body = refusal(400, "Bad Request", MISSING_HOST)
        # WSGI leaves the connection to the server (PEP 3333 forbids hop-by-hop headers).
        headers = [
            (name.decode().title(), value.decode())
            for name, value in refusal_headers(body)
            if name != b"connection"
        ]
        start_response(f"400 {reason}", headers)
        return [body]
    # After the check: a target naming a host is no Host header. gunicorn hands the target on
    # as `RAW_URI`; an empty authority is refused by Django's host check.
    target = absolute_form(environ.get("RAW_URI", ""))
    if target is not None:
        environ["HTTP_HOST"] = target.netloc
    if length := content_length(environ):
        environ["wsgi.input"] = WholeBody(environ["wsgi.input"], length)
    return django_application(environ, start_response)
