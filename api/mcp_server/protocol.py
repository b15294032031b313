"""uvicorn's HTTP protocol with its own answers in the API's JSON, and deadlines on a request's
head and body as gunicorn's (config/http_deadlines.py).

uvicorn (h11) answers a request it cannot parse (a malformed request line, a header without a
colon, headers past h11's 16 KiB) itself, before the MCP app sees it, with a plain-text 400
"Invalid HTTP request received.", and has no setting for that answer. `manage.py mcp_server
--transport http` (the Procfile's `mcp`) serves with this protocol instead: the same refusal, as
`{"error", "code"}` (`api.refusals`, gunicorn's twin) with the status h11 names for the error
(431 for headers too large, 501 for a transfer coding it cannot read, else 400).

uvicorn's only timeout on a client is `timeout_keep_alive` (5 s), between an answer and the next
request: a connection that sent part of a head, or a head and part of its body, then nothing,
was held for good (a trial's, 150 s with no answer: a file descriptor each). Here, as gunicorn:
- a head has `MCP_HEAD_TIMEOUT` seconds (10) from its first bytes to arrive whole, or is
  answered 408 `request_timeout` and its connection closed;
- a body has `MCP_BODY_TIMEOUT` seconds (30) from its head, or is answered 400 `invalid` (the
  body did not arrive in time; the app, reading it, is told the connection closed, and its own
  answer dropped), and its connection closed; an app that answered before reading it all has
  its connection closed;
- a new connection that sends nothing is closed after `timeout_keep_alive`, as one idle between
  requests is (uvicorn counted it only after an answer: one that never sent a byte was kept);
- a body its client half-closed the connection in the middle of is answered 400 `invalid`, cut
  short (`eof_received`; uvicorn closed it unanswered).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from typing import Any

import h11
from django.conf import settings
from uvicorn.protocols.http.h11_impl import H11Protocol

from api.errors import UNREADABLE_BODY, body, unreadable_body
from api.refusals import refusal, refusal_headers

log = logging.getLogger("castellan.mcp")


class JsonRefusalH11Protocol(H11Protocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.head_seconds: int = settings.MCP_HEAD_TIMEOUT
        self.body_seconds: int = settings.MCP_BODY_TIMEOUT
        self.deadline: asyncio.TimerHandle | None = None
        self.awaited: str | None = None  # what the deadline is for: "head" or "body"

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )

    def data_received(self, data: bytes) -> None:
        if self.awaited is None and self.conn.their_state is h11.IDLE:
            self._arm("head", self.head_seconds)  # a head's first bytes
        super().data_received(data)

    def handle_events(self) -> None:
        super().handle_events()
        state = self.conn.their_state
        if state is h11.SEND_BODY:  # the head is read: the body's deadline counts from now
            if self.awaited != "body":
                self._arm("body", self.body_seconds)
        elif state is not h11.IDLE or self.awaited == "body":
            self._disarm()  # the request is read whole (or the connection is done)
        elif self.awaited is None and self.conn.trailing_data[0]:
            self._arm("head", self.head_seconds)  # a pipelined head begun, read after an answer

    def eof_received(self) -> None:
        """A client that half-closes its connection (sends nothing more) in the middle of a body
        is answered that its body was cut short, as the REST API answers one (uvicorn closed the
        connection unanswered); then the connection closes, as uvicorn's does."""
        cycle = self.cycle
        if self.conn.their_state is h11.SEND_BODY and cycle is not None:
            if not cycle.response_started:
                self._answer(
                    400, "Bad Request", json.dumps(body(UNREADABLE_BODY, "invalid")).encode()
                )
            self.transport.close()
            self._drop_answer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self, awaited: str, seconds: int) -> None:
        self._disarm()
        self.awaited = awaited
        self.deadline = self.loop.call_later(seconds, self._too_late)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.deadline, self.awaited = None, None

    def _too_late(self) -> None:
        awaited = self.awaited
        self.deadline, self.awaited = None, None
        if self.transport.is_closing():
            return
        if awaited == "head":
            self._head_too_late()
        else:
            self._body_too_late()

    def _head_too_late(self) -> None:
        """Answered as gunicorn answers it (`HeadDeadline`), in bytes of its own: h11 sends no
        answer before a request's head."""
        message = f"the request's head did not arrive within {self.head_seconds} seconds"
        log.warning("Closed a connection: %s.", message)
        reason, content = refusal(408, "Request Timeout", message)
        lines = [f"HTTP/1.1 408 {reason}".encode()]
        lines += [name + b": " + value for name, value in refusal_headers(content)]
        self.transport.write(b"\r\n".join(lines) + b"\r\n\r\n" + content)
        self.transport.close()

    def _body_too_late(self) -> None:
        """Answered as the REST API answers a body past gunicorn's deadline (`BodyDeadline`)."""
        message = (
            f"the whole body did not arrive within {self.body_seconds} seconds of the request's "
            "head"
        )
        log.warning("Closed a connection: %s.", message)
        cycle = self.cycle
        if cycle is not None and not cycle.response_started:
            error = unreadable_body(TimeoutError(message))
            content = json.dumps(body(error, "invalid")).encode()
            self._answer(400, "Bad Request", content)
        self.transport.close()
        self._drop_answer()

    def _answer(self, status: int, reason: str, content: bytes) -> None:
        headers = refusal_headers(content)
        response = h11.Response(status_code=status, headers=headers, reason=reason.encode())
        for event in (response, h11.Data(data=content), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))

    def _drop_answer(self) -> None:
        """The app already answering the request is told the connection closed, as on a lost
        connection, so its answer is dropped instead of failing with an error logged ("can't
        handle event type Response ... MUST_CLOSE")."""
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True
            self.cycle.message_event.set()

    def send_400_response(self, msg: str) -> None:
        # uvicorn calls this from its `except h11.RemoteProtocolError`: the error is at hand.
        error = sys.exception()
        status, message = 400, msg
        if isinstance(error, h11.RemoteProtocolError):
            status, message = error.error_status_hint, str(error) or msg
        reason, content = refusal(status, "Bad Request", message)
        self._answer(status, reason, content)
        self.transport.close()
        self._drop_answer()  # a request whose body broke (a bad chunk): its app is answering
