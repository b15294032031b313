"""What every MCP tool shares: who is calling, with which scope, and one error shape.

A caller is signed in by the same keys and rules as the REST API (`api.authentication`,
`api.scopes`): over HTTP the `Authorization: Bearer <key>` header of the request, over stdio the
key in the `CASTELLAN_API_KEY` environment variable. Every call signs in afresh, so a revoked key
stops working at once, and is throttled as the REST route it stands for (`Route`). A call meets
the REST API's edge too: a NUL or a lone surrogate anywhere in its arguments is `invalid`
(`api.parsers`), a busy or unreachable database `database_busy` or `database_unavailable`
(`config.middleware`). A refusal is an MCP tool error whose text is the REST API's JSON error
body, `{"error": ..., "code": ...}`, with the same stable code; never the SDK's bare "Error
executing tool", which carries no code.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ParamSpec

from django.db import connections
from django.http import HttpRequest
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from api.authentication import identity_for_key
from api.errors import body, exception_handler
from api.parsers import check_document
from api.permissions import require_in
from api.scopes import Scope, scope_for
from dedup.database import database_failure
from dedup.errors import DomainError

logger = logging.getLogger("castellan.mcp")

KEY_VARIABLE = "CASTELLAN_API_KEY"
# The name every tool gives the SDK's Context: the one argument that is not the caller's data.
CONTEXT_ARGUMENT = "ctx"
P = ParamSpec("P")


@dataclass(frozen=True)
class Route:
    """The REST route a tool (or resource) stands for: its view and method. The call is
    throttled by that view's own DRF throttle classes, scope and rate, counted in the same cache
    entries, so a key has one budget across REST and MCP."""

    view: type[APIView]
    method: str


@dataclass(frozen=True)
class Caller:
    user: Any
    auth: Any
    scope: Scope

    def require(self, right: str, wing: str | None, *, stored: bool = False) -> Scope:
        """The same rule as REST: a wing out of reach is not found for a read and forbidden
        (`out_of_scope`) for a write (`stored`: a stored wing's name, `require_in`)."""
        return require_in(self.scope, right, wing, stored=stored)

    @property
    def source(self) -> dict[str, str]:
        """The provenance a write records when the agent gives none."""
        return {"via": "mcp", "user": self.user.get_username()}


def credential_of(headers: Mapping[str, str] | None) -> str:
    """The key: from the HTTP request's Bearer header, or (stdio: no headers) the environment."""
    if headers is None:
        return os.environ.get(KEY_VARIABLE, "").strip()
    keyword, _, credential = headers.get("authorization", "").strip().partition(" ")
    return credential.strip() if keyword.lower() in {"bearer", "token"} else ""


def caller_of(context: Context, route: Route) -> Caller:
    """The caller, signed in and throttled as the REST `route` would sign in and throttle it."""
    caller = signed_in(context.headers)
    throttle(caller, route)
    return caller


def signed_in(headers: Mapping[str, str] | None) -> Caller:
    """The caller the headers' key (stdio: the environment's) signs in; raises the REST API's
    NotAuthenticated or AuthenticationFailed."""
    credential = credential_of(headers)
    if not credential:
        raise exceptions.NotAuthenticated(
            f"Send `Authorization: Bearer <key>` (HTTP) or set {KEY_VARIABLE} (stdio)."
        )
    user, auth = identity_for_key(credential)
    return Caller(user=user, auth=auth, scope=scope_for(user, auth))


def throttle(caller: Caller, route: Route) -> None:
    """DRF's own `APIView.check_throttles` of the route's view, on a request standing for the
    call: its method and its user and auth, which are what the throttles count by
    (`api.throttles.identity`). Over the rate it raises `Throttled`, with the wait."""
    http_request = HttpRequest()
    http_request.method = route.method
    request = Request(http_request)
    request.user = caller.user
    request.auth = caller.auth
    view = route.view()
    view.request = request
    view.check_throttles(request)


def validated(serializer_class: type[serializers.Serializer], data: dict[str, Any]) -> dict:
    """The arguments checked by the REST API's own input serializer (lengths, NUL, labels)."""
    serializer = serializer_class(data={k: v for k, v in data.items() if v is not None})
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


@contextlib.contextmanager
def argument_names(names: Mapping[str, str]) -> Iterator[None]:
    """A refusal that names a REST parameter (its input serializer's, a service's `field`)
    names the tool's argument instead: `q` is the search tool's `query`."""
    try:
        yield
    except serializers.ValidationError as error:
        if not isinstance(error.detail, dict):
            raise
        detail = {names.get(name, name): value for name, value in error.detail.items()}
        raise serializers.ValidationError(detail) from error
    except DomainError as error:
        field = error.details.get("field")
        if not isinstance(field, str) or field not in names:
            raise
        message = error.message
        if message.startswith(f"{field} "):
            message = names[field] + message[len(field) :]
        details = {**error.details, "field": names[field]}
        raise type(error)(message, code=error.code, details=details) from error


def plain(data: Any) -> Any:
    """A serializer's output as plain JSON values (no ReturnDict, UUID or datetime)."""
    return json.loads(json.dumps(data, default=str))


def error_answer(exc: Exception) -> tuple[int, dict[str, Any]]:
    """The REST API's HTTP status and JSON error body for `exc`, `{"error", "code"}`, the wait
    REST sends as `Retry-After` in `details.retry_after`: the API's exception handler's answer,
    else the edge's for a busy or unreachable database, else (a bug) 500 `server_error`, logged."""
    response = exception_handler(exc, {})
    if response is not None:
        answer = plain(response.data)
        wait = response.get("Retry-After")
        if wait is not None:
            answer.setdefault("details", {})["retry_after"] = int(wait)
        return response.status_code, answer
    failure = database_failure(exc)
    if failure is not None:
        code, message, retry_after = failure
        logger.warning("%s in an MCP call: %s", code, exc)
        return 503, body(message, code, {"retry_after": retry_after})
    logger.error("an MCP call failed", exc_info=exc)
    return 500, body("Internal server error.", "server_error")


def error_body(exc: Exception) -> dict[str, Any]:
    """`error_answer`'s body: what a tool error or a resource's JSON-RPC error carries."""
    return error_answer(exc)[1]


def check_arguments(arguments: dict[str, Any]) -> None:
    """The REST parser's check of a JSON body, on a call's arguments: a NUL or a lone surrogate
    in any string (a key too, at any depth) is `invalid` naming where, too deep `invalid_json`."""
    check_document({k: v for k, v in arguments.items() if k != CONTEXT_ARGUMENT})


def refusal(exc: Exception) -> CallToolResult:
    """The REST API's answer to `exc`, as an MCP tool error: its text is the JSON error body."""
    body = error_body(exc)
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body))],
        structured_content=body,
        is_error=True,
    )


def release_old_connections() -> None:
    """Django's `close_old_connections`, as around a request, but never inside a transaction
    (a test's, which it would close)."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close_if_unusable_or_obsolete()


def tool(function: Callable[P, dict[str, Any]]) -> Callable[P, Any]:
    """One tool call: a database connection past its age is dropped first and after, as around
    a request, the arguments are checked as a REST body is (`check_arguments`), and every
    failure comes back as the API's error body (`refusal`), not as the SDK's text for a failure.
    The signature is kept, for the SDK to build the tool's schema from it."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> dict[str, Any] | CallToolResult:
        release_old_connections()
        try:
            check_arguments(signature.bind(*args, **kwargs).arguments)
            return function(*args, **kwargs)
        except Exception as exc:  # every failure is an answer with a code (a crash: logged)
            return refusal(exc)
        finally:
            release_old_connections()

    return call
