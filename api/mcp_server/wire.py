"""What the SDK's reader cannot read still gets an answer, over stdio and over HTTP.

The SDK reads a message with pydantic's JSON parser, which refuses a string holding a lone
surrogate (the escape `"\\ud800"`, valid JSON) as malformed, where Python's parser, the REST
API's, reads it. Over stdio the SDK then drops the line without a word, so the client waits for
an answer forever (a line that is no JSON at all too); over HTTP it answers -32700, not the
REST API's `invalid`. Here such a message is read as the REST API reads a body and the lone
surrogate refused as a NUL is, as `invalid` naming where: in a tool call's arguments as a tool
error (`calls.refusal`), elsewhere as a JSON-RPC error -32602 whose data is the REST error body,
as a resource's refusal is. A line that is no JSON is a -32700 parse error, one that is JSON
but no JSON-RPC message -32600, each with the REST error body as data too. So is a message the
SDK reads but the REST API would refuse as a body (NaN, nested deeper than `MAX_DEPTH`, a NUL
anywhere), which the SDK never sees: the same rule over MCP as over REST.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
from collections.abc import AsyncIterator
from types import TracebackType
from typing import IO, Any, Self

import anyio
import pydantic_core
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError
from rest_framework import exceptions
from rest_framework.utils.json import strict_constant

from api.mcp_server.calls import check_arguments, error_body, refusal
from api.parsers import check_document
from dedup.errors import InvalidInput
from dedup.json_text import TOO_DEEP, json_problem
from dedup.validation import unstorable

logger = logging.getLogger("castellan.mcp")

NOT_JSON = "The message is not JSON: {}"
NOT_A_MESSAGE = "The message is not a JSON-RPC 2.0 request, notification or response."
NOT_READABLE = "The message is not JSON the protocol can read."
ID_OF_A_REQUEST = "A request's id must be a string or an integer (MCP: never null)."
# JSON-RPC allows parameters by position; MCP takes them by name only.
PARAMS_BY_NAME = "params must be an object: MCP takes its parameters by name."


def answer_to_text(text: str | bytes) -> JSONRPCMessage | None:
    """The answer to a message (a stdio line, an HTTP body) the SDK's reader refused; None for
    a notification or a response, which are never answered."""
    try:
        # As the REST API reads a body: UTF-8 (Python would take UTF-16, or skip a byte order
        # mark, where the SDK takes neither), no NaN or Infinity, its messages put in the
        # sender's terms.
        decoded = text.decode() if isinstance(text, bytes) else text
        document = json.loads(decoded, parse_constant=strict_constant)
    except RecursionError:  # nested too deep for Python: far deeper than the REST API reads
        return failure(None, PARSE_ERROR, exceptions.ParseError(TOO_DEEP))
    except ValueError as exc:
        return failure(None, PARSE_ERROR, exceptions.ParseError(NOT_JSON.format(json_problem(exc))))
    return answer_to_document(document)


def answer_to_document(document: Any) -> JSONRPCMessage | None:
    """The answer to a JSON document the SDK's reader refused (see `answer_to_text`)."""
    try:
        message = jsonrpc_message_adapter.validate_python(document, by_name=False)
    except ValidationError:
        request_id = id_of_request(document)
        if request_id is not None and not isinstance(document.get("params", {}), dict):
            refused = InvalidInput(PARAMS_BY_NAME, details={"field": "params"})
            return failure(request_id, INVALID_PARAMS, refused)
        return failure(None, INVALID_REQUEST, InvalidInput(NOT_A_MESSAGE))
    if not isinstance(message, JSONRPCRequest):
        logger.warning("an MCP notification or response the SDK cannot read was dropped")
        return None
    # An id holding a lone surrogate cannot be written back: such an id was not readable.
    request_id = None if isinstance(message.id, str) and unstorable(message.id) else message.id
    arguments = (message.params or {}).get("arguments")
    if message.method == "tools/call" and isinstance(arguments, dict):
        try:
            check_arguments(arguments)
        except (exceptions.ValidationError, exceptions.ParseError) as exc:  # as the tool does
            if request_id is None:  # a result needs an id: only an error can go without one
                return failure(None, INVALID_PARAMS, exc)
            result = refusal(exc).model_dump(by_alias=True, exclude_unset=True, mode="json")
            return JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
    try:
        check_document(envelope(document))
    except exceptions.ValidationError as exc:
        return failure(request_id, INVALID_PARAMS, exc)
    except exceptions.ParseError as exc:  # too deep
        return failure(request_id, PARSE_ERROR, exc)
    return failure(request_id, PARSE_ERROR, exceptions.ParseError(NOT_READABLE))


def tool_arguments(document: Any) -> dict[str, Any] | None:
    """A tool call's arguments: the tool's own body, judged on their own (`check_arguments`, as
    the tool judges them: nested 32 levels below `arguments`, as a REST body below its top)."""
    params = document.get("params") if isinstance(document, dict) else None
    arguments = params.get("arguments") if isinstance(params, dict) else None
    called = isinstance(document, dict) and document.get("method") == "tools/call"
    return arguments if called and isinstance(arguments, dict) else None


def envelope(document: Any) -> Any:
    """The message without a tool call's arguments (`tool_arguments`): what is judged as a
    REST body is, around them."""
    if tool_arguments(document) is None:
        return document
    return {**document, "params": {**document["params"], "arguments": {}}}


def id_of_request(document: Any) -> str | int | None:
    """The id of a document shaped as a JSON-RPC request (version, method, an id that can be
    written back), whatever else it holds; None for any other."""
    if not (isinstance(document, dict) and document.get("jsonrpc") == "2.0"):
        return None
    request_id = document.get("id")
    writable = (isinstance(request_id, int) and not isinstance(request_id, bool)) or (
        isinstance(request_id, str) and not unstorable(request_id)
    )
    return request_id if writable and isinstance(document.get("method"), str) else None


def failure(request_id: str | int | None, code: int, exc: Exception) -> JSONRPCError:
    """A JSON-RPC error whose data is the REST API's error body for `exc`."""
    body = error_body(exc)
    logger.warning("an MCP message the SDK cannot read was refused: %s", body["error"])
    error = ErrorData(code=code, message=body["error"], data=body)
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


def line_of(exc: Exception) -> str | None:
    """The line the SDK's stdio reader failed to parse, which pydantic's error holds."""
    if isinstance(exc, ValidationError):
        for problem in exc.errors(include_url=False):
            if problem["type"] == "json_invalid" and isinstance(problem["input"], str):
                return problem["input"]
    return None


def answer_to_failure(exc: Exception) -> JSONRPCMessage | None:
    """The answer to a line the SDK's stdio reader refused, given the reader's exception: that
    of a blank line is none (no message)."""
    line = line_of(exc)
    if line is None:  # JSON, but no JSON-RPC message: the error holds the document, not a line
        return answer_to_document(document_of(exc))
    return answer_to_text(line) if line.strip() else None


def document_of(exc: Exception) -> Any:
    """The JSON object the SDK's stdio reader found no message in, which pydantic's error holds
    (the input of a kind of message whose member is missing: the object itself); None if it
    holds none (an array, a number)."""
    if isinstance(exc, ValidationError):
        for problem in exc.errors(include_url=False):
            missing = problem["type"] == "missing" and len(problem["loc"]) == 2
            if missing and isinstance(problem["input"], dict):
                return problem["input"]
    return None


class AnsweringReadStream:
    """The stdio transport's read stream, on which the SDK's reader puts an exception for a
    line it could not read: each one is answered here (`answer_to_failure`) rather than handed
    to the server, which drops it. Everything else passes through as it came."""

    def __init__(
        self,
        inner: Any,  # the SDK's stream (its type is private to it), as is write_stream
        write_stream: Any,
    ) -> None:
        self.inner = inner
        self.write_stream = write_stream

    @property
    def last_context(self) -> Any:
        """The sender's context, which the SDK's dispatcher runs a handler in."""
        return getattr(self.inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self.inner.receive()
            if not isinstance(item, Exception):
                return item
            try:
                answer = answer_to_failure(item)
            except Exception:  # a bug here must cost one line's answer, not the connection
                logger.exception("an MCP line the SDK cannot read could not be answered")
                continue
            if answer is not None:
                await self.write_stream.send(SessionMessage(answer))

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class UnownedText(io.TextIOWrapper):
    """A text layer over a stream it does not own (the process's stdin): closing it, as garbage
    collection does, leaves the stream open (the SDK's stdio transport has its own for this)."""

    def close(self) -> None:
        with contextlib.suppress(ValueError):  # detached already
            self.detach()


class ScreenedStdin(anyio.AsyncFile[str]):
    """stdin's lines as the SDK's stdio reader reads them (UTF-8, a bad byte replaced), but a
    request the SDK would misread (`answer_to_misread`) is answered here, on `answers` (the
    transport's write stream, set before the server reads), and not handed on: the SDK takes
    its id away before Castellan sees the message. Given to the SDK as its stdin, which it then
    leaves in place where it would point descriptor 0 at the null device (nothing here reads
    stdin but the transport)."""

    answers: Any = None  # the SDK's write stream (its type is private to it)

    def __init__(self, stdin: IO[bytes]) -> None:
        super().__init__(UnownedText(stdin, encoding="utf-8", errors="replace"))

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in super().__aiter__():
            try:
                message = jsonrpc_message_adapter.validate_json(line, by_name=False)
            except ValidationError:  # the SDK refuses it too: AnsweringReadStream answers it
                yield line
                continue
            strict = _strict_json(line.encode(errors="surrogatepass"))
            answer = answer_to_misread(message, line) if strict else answer_to_text(line)
            if answer is None:
                yield line
            else:
                await self.answers.send(SessionMessage(answer))


def answer_to_body(body: bytes) -> JSONRPCMessage | None:
    """The answer to an HTTP body that is no message the SDK reads, as over stdio (the SDK
    answered one that is no JSON -32700 without the REST error body, and JSON that is no
    JSON-RPC message -32602, "Validation error", where stdio answers -32600); None for a
    message the SDK reads, left to it."""
    try:
        message = jsonrpc_message_adapter.validate_json(body, by_name=False)
    except ValidationError:
        return answer_to_text(body)
    if not _strict_json(body):  # read by the SDK, but not a body the REST API reads (NaN)
        return answer_to_text(body)
    return answer_to_misread(message, body)


def _strict_json(body: bytes) -> bool:
    """Whether the body is a JSON document the REST API would read as a body: UTF-8, no NaN or
    Infinity, nested at most `MAX_DEPTH` levels, no NUL or lone surrogate in any string
    (`check_document`; a tool call's arguments as the tool judges them, `tool_arguments`). The
    SDK's reader takes NaN, 254 levels and NULs anywhere in a message (`_meta`, a resource's
    parameters); such a message is answered by `answer_to_text`, in the REST API's words, and
    never handed to it."""
    try:
        document = json.loads(body.decode(), parse_constant=strict_constant)
    except (ValueError, RecursionError):
        return False
    arguments = tool_arguments(document)
    try:
        check_document(envelope(document))
        if arguments is not None:
            check_arguments(arguments)
    except (exceptions.ValidationError, exceptions.ParseError):
        return False
    return True


def answer_to_misread(message: JSONRPCMessage, text: str | bytes) -> JSONRPCMessage | None:
    """The answer to a request whose id is no string or integer (`true`, `null`, `1.5`), which
    the SDK reads as `message`, a notification (it drops the id), never answered, so the client
    waited for ever: -32600. None for any other message."""
    if isinstance(message, JSONRPCNotification) and _holds_an_id(text):
        return failure(None, INVALID_REQUEST, InvalidInput(ID_OF_A_REQUEST))
    return None


def _holds_an_id(body: str | bytes) -> bool:
    try:
        document = pydantic_core.from_json(body)  # as the SDK's reader parsed it
    except ValueError:
        return False
    return isinstance(document, dict) and "id" in document
