"""Over HTTP, a POSTed message's body is read whole before the SDK's app sees it: one the SDK
cannot read is answered here (`wire.answer_to_body`), as over stdio; one cut short (its
connection closed before all of it arrived: the client left, or the server's deadline for it
passed, `api.mcp_server.protocol`) is answered 400 `invalid` saying so, as the REST API answers
it, and logged as cut short, not as a message that is no JSON (a trial's client, giving up on a
body, was logged "The message is not JSON")."""

from __future__ import annotations

import json
import logging

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from mcp.types import INVALID_REQUEST, PARSE_ERROR
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import UNREADABLE_BODY, body
from api.mcp_server.wire import answer_to_body

logger = logging.getLogger("castellan.mcp")


class AnswerUnreadable:
    """Over HTTP, answers a POSTed body that `answer_to_body` answers, and hands every other to
    the SDK's app with its body as it came. The body is read whole once, within the SDK's own
    limit on its size (a larger one is refused 413, as the SDK refuses it)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.limited = RequestBodyLimitMiddleware(self.screen, DEFAULT_MAX_REQUEST_BODY_SIZE)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.limited(scope, receive, refusals_in_json(send))

    async def screen(self, scope: Scope, receive: Receive, send: Send) -> None:
        first = await receive()  # the whole body, as the limit's middleware replays it
        if first["type"] != "http.request" or first.get("more_body"):
            await cut_short(send)
            return
        answer = answer_to_body(first.get("body", b""))
        if answer is None:
            await self.app(scope, replay(first, receive), send)
            return
        error = getattr(answer, "error", None)
        # As the SDK answers: a message it cannot read 400, a refusal in an answer 200.
        status = 400 if error is not None and error.code in (PARSE_ERROR, INVALID_REQUEST) else 200
        content = answer.model_dump_json(by_alias=True, exclude_unset=True).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": content})


# The SDK's own refusals of a request it reads, as the REST API's bodies with their codes: a
# body over its limit (plain text), and one whose `Accept` takes no JSON, which is all this
# server answers (a JSON-RPC error without a code).
SDK_REFUSALS = {
    413: json.dumps(
        {"error": "The request body is too large.", "code": "content_too_large"}
    ).encode(),
    406: json.dumps(
        {
            "error": "Accept application/json: this server answers every request as JSON.",
            "code": "not_acceptable",
        }
    ).encode(),
}


def refusals_in_json(send: Send) -> Send:
    """`send`, with the SDK's refusals (`SDK_REFUSALS`) answered as the REST API's, with the
    same status, and a JSON-RPC error it answers 400 without `data` given the REST API's body
    as its data (`with_rest_data`: a protocol-version header it does not know)."""
    refusal: bytes | None = None
    held: Message | None = None  # a 400's start, sent once its body is whole
    content = b""

    async def sent(message: Message) -> None:
        nonlocal refusal, held, content
        if message["type"] == "http.response.start" and message["status"] in SDK_REFUSALS:
            refusal = SDK_REFUSALS[message["status"]]
            headers = [(b"content-type", b"application/json")]
            await send({**message, "headers": headers})
        elif refusal is not None and message["type"] == "http.response.body":
            await send({**message, "body": refusal if message.get("body") else b""})
        elif message["type"] == "http.response.start" and message["status"] == 400:
            held = message
        elif held is not None and message["type"] == "http.response.body":
            content += message.get("body", b"")
            if message.get("more_body"):
                return
            content = with_rest_data(content)
            headers = [(b"content-type", b"application/json")]
            headers.append((b"content-length", str(len(content)).encode()))
            await send({**held, "headers": headers})
            await send({"type": "http.response.body", "body": content})
        else:
            await send(message)

    return sent


def with_rest_data(content: bytes) -> bytes:
    """A JSON-RPC error answer whose error has no `data`, given the REST API's body as its data,
    code `invalid` (every refusal of this server carries one); any other answer as it is."""
    try:
        answer = json.loads(content)
    except ValueError:
        return content
    error = answer.get("error") if isinstance(answer, dict) else None
    if not isinstance(error, dict) or "data" in error:
        return content
    error["data"] = body(str(error.get("message", "")), "invalid")
    return json.dumps(answer).encode()


def replay(first: Message, receive: Receive) -> Receive:
    """`receive`, giving `first` (already read) once before what follows it."""
    pending = [first]

    async def replayed() -> Message:
        return pending.pop() if pending else await receive()

    return replayed


async def cut_short(send: Send) -> None:
    """The answer to a body whose connection closed before all of it arrived (the limit's
    middleware read until then: what came is still to be continued, or nothing came). The
    client is most likely gone and the answer dropped; the log says what happened."""
    logger.warning("an MCP message cut short was dropped: %s", UNREADABLE_BODY)
    content = json.dumps(body(UNREADABLE_BODY, "invalid")).encode()
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": content})
