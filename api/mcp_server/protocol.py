"""uvicorn's HTTP protocol with its one answer of its own in the API's JSON.

uvicorn (h11) answers a request it cannot parse (a malformed request line, a header without a
colon, headers past h11's 16 KiB) itself, before the MCP app sees it, with a plain-text 400
"Invalid HTTP request received.", and has no setting for that answer. `manage.py mcp_server
--transport http` (the Procfile's `mcp`) serves with this protocol instead: the same refusal, as
`{"error", "code"}` (`api.refusals`, gunicorn's twin) with the status h11 names for the error
(431 for headers too large, 501 for a transfer coding it cannot read, else 400).
"""

from __future__ import annotations

import sys

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from api.refusals import refusal, refusal_headers


class JsonRefusalH11Protocol(H11Protocol):
    def send_400_response(self, msg: str) -> None:
        # uvicorn calls this from its `except h11.RemoteProtocolError`: the error is at hand.
        error = sys.exception()
        status, message = 400, msg
        if isinstance(error, h11.RemoteProtocolError):
            status, message = error.error_status_hint, str(error) or msg
        reason, body = refusal(status, "Bad Request", message)
        headers = refusal_headers(body)
        response = h11.Response(status_code=status, headers=headers, reason=reason.encode())
        for event in (response, h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()
        # A request whose body broke (a bad chunk) has an app already answering it: it is told
        # now, as on a lost connection, so its answer is dropped instead of failing with an
        # error logged ("can't handle event type Response ... MUST_CLOSE").
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True
            self.cycle.message_event.set()
