"""The MCP resources: the wings and rooms a key reaches, for a client to read (or attach) without
a tool call, scoped as the tools `list_wings` and `list_rooms` are (the same functions).

- `castellan://wings`: the wings, each with its rooms and their numbers of current drawers;
- `castellan://wings/{wing}/rooms`: one wing and its rooms (a wing out of reach: not found).

A refusal is a JSON-RPC error whose `data` is the REST API's error body, `{"error", "code"}`.
A tool call's arguments that do not match the tool's schema (a wrong type, one missing, one it
does not declare) are the REST API's `invalid` too, naming the argument, rather than the SDK's
text without a code (or, for an undeclared one, nothing: the SDK dropped it).

The SDK hands the request's Context (over HTTP, the headers holding the key) only to a resource
template's function, not to a fixed resource's, so `CastellanServer.read_resource` reads
`castellan://wings` itself with the request's Context; without one (stdio, or in-process) the
key comes from the environment, as for the tools.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from types import SimpleNamespace
from typing import Any

import anyio
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import (
    ResourceNotFoundError,
    ToolError,
    UnexpectedToolError,
)
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    Tool,
)
from pydantic import AnyUrl, ValidationError
from rest_framework import serializers

from api.errors import DETAILS_NAMED
from api.mcp_server import reads
from api.mcp_server.calls import (
    caller_of,
    check_arguments,
    error_body,
    refusal,
    release_old_connections,
)
from api.mcp_server.wire import AnsweringReadStream, ScreenedStdin
from api.serializers.common import UNKNOWN_FIELD, unknown_fields
from dedup.errors import NotFound

WINGS_URI = "castellan://wings"
ROOMS_URI = "castellan://wings/{wing}/rooms"
JSON = "application/json"
CLOSED = {"additionalProperties": False}


def wings(ctx: Context) -> str:
    """The wings you can reach, each with its rooms and how many current drawers each holds."""
    return _answer(lambda: reads.wings_of(caller_of(ctx, reads.WINGS_READ)))


def wings_from_environment() -> str:
    """`wings` with no request (stdio, in-process): the key from the environment."""
    return wings(SimpleNamespace(headers=None))  # type: ignore[arg-type]


def rooms(wing: str, ctx: Context) -> str:
    """One wing you can reach, with its rooms and how many current drawers each holds."""
    return _answer(lambda: reads.rooms_of(caller_of(ctx, reads.WING_READ), wing), wing=wing)


def _answer(read: Callable[[], dict[str, Any]], **arguments: Any) -> str:
    """A resource's JSON, read as a tool call is (connections past their age dropped first and
    after, the arguments checked), a refusal raised as a JSON-RPC error holding the REST error
    body."""
    release_old_connections()
    try:
        check_arguments(arguments)
        return json.dumps(read())
    except Exception as exc:  # every failure is an answer with a code (a crash: logged)
        body = error_body(exc)
        raise MCPError(code=INVALID_PARAMS, message=body["error"], data=body) from exc
    finally:
        release_old_connections()


def add_resources(server: MCPServer) -> None:
    server.resource(WINGS_URI, name="wings", mime_type=JSON, description=wings.__doc__)(
        wings_from_environment
    )
    server.resource(ROOMS_URI, name="rooms", mime_type=JSON)(rooms)


def invalid_arguments(error: ValidationError) -> serializers.ValidationError:
    """The SDK's check of a call against the tool's schema, as the REST API's `invalid`: each
    problem at its path written as REST writes one (`items[0].wing`), an argument the schema
    does not declare (a checkpoint item's) `Unknown field.`."""
    fields: dict[str, list[str]] = {}
    problems = error.errors(include_url=False, include_input=False)
    for problem in problems[:DETAILS_NAMED]:  # the answer names no more (`api.errors`)
        where = path_of(problem["loc"]) or "arguments"
        message = UNKNOWN_FIELD if problem["type"] == "extra_forbidden" else problem["msg"]
        fields.setdefault(where, []).append(message)
    return serializers.ValidationError(fields)


def path_of(location: Iterable[str | int]) -> str:
    path = ""
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else part
    return path


def checked(arguments: dict[str, Any], schema: dict[str, Any]) -> None:
    check_arguments(arguments)
    check_known(arguments, schema)


def check_known(arguments: dict[str, Any], schema: dict[str, Any]) -> None:
    """An argument the tool's schema does not declare is `invalid`, by name, as a field a REST
    body does not declare is: the SDK dropped it without a word, so a misspelt optional
    argument (`limt`) was silently its default."""
    declared = schema.get("properties", {})
    unknown = [name for name in arguments if name not in declared]
    if unknown:
        raise unknown_fields(unknown)


class CastellanServer(MCPServer):
    """The SDK's server, reading `castellan://wings` with the request's Context (see above),
    and answering arguments that do not match a tool's schema with the REST API's `invalid`,
    and a tool or a prompt it does not have with `not_found` (the SDK's answers were plain text
    or a JSON-RPC error of code 0, logged with a traceback as the server's own failure)."""

    async def list_tools(self) -> list[Tool]:
        """The tools, each schema closed (`additionalProperties: false`), as `call_tool` holds
        a call to it (`check_known`)."""
        return [
            tool.model_copy(update={"input_schema": {**tool.input_schema, **CLOSED}})
            for tool in await super().list_tools()
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult | InputRequiredResult:
        tools = {tool.name: tool for tool in await self.list_tools()}
        if name not in tools:
            return refusal(NotFound(f"No tool named {name[:100]!r}: tools/list names them."))
        try:
            # As a REST body is read: the unstorable strings first (a NUL in a name too). In a
            # worker thread: a message of 4 MiB holding 380,000 keys had held the event loop,
            # and every other call of the process, for seconds.
            await anyio.to_thread.run_sync(checked, arguments, tools[name].input_schema)
        except Exception as exc:  # every failure is an answer with a code (a crash: logged)
            return refusal(exc)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            return refusal(invalid_arguments(cause))

    async def run_stdio_async(self) -> None:
        """The SDK's stdio transport, with every line it cannot read or misreads answered
        (`api.mcp_server.wire`), where the SDK drops one and its client waits forever."""
        stdin = ScreenedStdin(sys.stdin.buffer)
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            stdin.answers = write_stream  # before the reader, which starts at the next await
            await self._lowlevel_server.run(
                AnsweringReadStream(read_stream, write_stream),
                write_stream,
                self._lowlevel_server.create_initialization_options(),
            )

    async def read_resource(
        self, uri: AnyUrl | str, context: Context | None = None
    ) -> Iterable[ReadResourceContents] | Any:
        if str(uri) == WINGS_URI and context is not None:
            content = await anyio.to_thread.run_sync(wings, context)
            return [ReadResourceContents(content=content, mime_type=JSON)]
        try:
            return await super().read_resource(uri, context)
        except ResourceNotFoundError as exc:  # the SDK's data was `{uri}`, with no code
            where = str(uri)[:200]
            refused = NotFound(
                f"No resource at {where!r}: resources/list and resources/templates/list name them.",
                details={"uri": where},
            )
            body = error_body(refused)
            raise MCPError(code=INVALID_PARAMS, message=body["error"], data=body) from exc

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context | None = None
    ) -> GetPromptResult | InputRequiredResult:
        if name not in {prompt.name for prompt in await self.list_prompts()}:
            body = error_body(NotFound(f"No prompt named {name[:100]!r}: prompts/list names them."))
            raise MCPError(code=INVALID_PARAMS, message=body["error"], data=body)
        return await super().get_prompt(name, arguments, context)
