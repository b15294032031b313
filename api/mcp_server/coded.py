"""Every JSON-RPC error the server answers carries a stable code: its `data` is the REST API's
error body, `{"error", "code"}`, as a resource's refusal and an unreadable message's are.

The SDK answered some requests with data a client cannot branch on: params that are not what
the method takes (`tools/call` without params, `arguments: [1]`) -32602 with data "", a method
it does not serve -32601 with the method's name, an unknown resource -32602 with `{uri}`. A
middleware around every request (the SDK's `ServerMiddleware`, which sees the params' failed
validation and every `MCPError`) answers them with the REST body instead: `invalid` naming
where (`params.arguments`), `not_found` with the method or the URI in `details`.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    ErrorData,
)
from pydantic import ValidationError
from rest_framework import serializers

from api.errors import body
from api.mcp_server.calls import error_body

# The REST code for a JSON-RPC error the SDK raised with no body of ours.
CODES = {
    PARSE_ERROR: "invalid_json",
    INVALID_REQUEST: "invalid",
    METHOD_NOT_FOUND: "not_found",
    INVALID_PARAMS: "invalid",
    INTERNAL_ERROR: "server_error",
}
QUOTED_MAX = 100  # a method's name is the sender's: a bounded part of it is quoted


def is_coded(data: Any) -> bool:
    """Whether a JSON-RPC error's data is a REST error body already."""
    return isinstance(data, dict) and isinstance(data.get("code"), str) and "error" in data


def coded(error: ErrorData) -> MCPError:
    """The error, its data the REST body its code stands for (what the SDK put in `data`, a
    method's name or a URI, kept in `details`)."""
    code = CODES.get(error.code, "error")
    if error.code == METHOD_NOT_FOUND and isinstance(error.data, str):
        method = error.data[:QUOTED_MAX]
        answer = body(f"No method {method!r} on this server.", code, {"method": method})
    elif isinstance(error.data, dict) and error.data:
        answer = body(error.message, code, error.data)
    else:
        answer = body(error.message, code)
    return MCPError(code=error.code, message=answer["error"], data=answer)


def invalid_params(error: ValidationError) -> MCPError:
    """Params the method does not take, as the REST API's `invalid` naming each place
    (`params.name`, `params.arguments`)."""
    fields: dict[str, list[str]] = {}
    for problem in error.errors(include_url=False, include_input=False):
        location = [str(part) for part in problem["loc"]]
        if location[:1] != ["params"]:  # a model of the params alone: said from the message
            location.insert(0, "params")
        where = ".".join(location)
        fields.setdefault(where, []).append(problem["msg"])
    answer = error_body(serializers.ValidationError(fields))
    return MCPError(code=INVALID_PARAMS, message=answer["error"], data=answer)


async def coded_errors(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """The server middleware: a request's failure answered with the REST error body."""
    try:
        return await call_next(ctx)
    except ValidationError as error:  # the params' own model
        raise invalid_params(error) from error
    except MCPError as error:
        if is_coded(error.data):
            raise
        raise coded(error.error) from error
