"""One error shape for the whole API: {"error": "<message>", "code": "<stable code>"}.

Domain errors carry their own code and status; DRF's and Django's exceptions are mapped here, so
a client can branch on `code` and show `error`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    JsonResponse,
    UnreadablePostError,
)
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from api.authentication import KeyNotForAgent
from api.serializers.common import ErrorSerializer
from config.observability import refusal_noted
from dedup.errors import DomainError

# The body's read failed: the connection closed (or broke) before all of it arrived. Nothing was
# read, so nothing was written; the client is most likely gone, so this is seldom seen.
UNREADABLE_BODY = "The body could not be read: the connection closed before all of it arrived."

ERRORS = {
    400: OpenApiResponse(
        ErrorSerializer,
        description="Invalid input (path, query or body; `invalid`, `invalid_json`, ...); "
        "nothing was written.",
    ),
    401: OpenApiResponse(ErrorSerializer, description="Not authenticated."),
    403: OpenApiResponse(
        ErrorSerializer,
        description="Permission denied: the role or key does not hold the right "
        "(`permission_denied`), or the key does not reach the wing, or the route spans every "
        "wing and the key reaches only some (`out_of_scope`, `details.wings`: those it does), "
        "or the agent key was made for a person's login, not an agent, and is refused for "
        "everything until an admin replaces it (`key_not_for_agent`).",
    ),
    404: OpenApiResponse(ErrorSerializer, description="Unknown id."),
    409: OpenApiResponse(ErrorSerializer, description="Conflict; nothing was written."),
    411: OpenApiResponse(
        ErrorSerializer,
        description="A body sent with a transfer coding (chunked) and no Content-Length "
        "(`unsupported_request`); nothing was written.",
    ),
    414: OpenApiResponse(
        ErrorSerializer,
        description="The request line (its path and query) is too long for the server "
        "(`request_too_large`, answered by gunicorn before the application).",
    ),
    415: OpenApiResponse(
        ErrorSerializer,
        description="A body that is not `application/json` (`unsupported_media_type`); "
        "nothing was written.",
    ),
    429: OpenApiResponse(
        ErrorSerializer,
        description="Too many writes from this key or user (`throttled`, with `Retry-After`: "
        "CASTELLAN_WRITE_THROTTLE_RATE); nothing was written.",
    ),
    431: OpenApiResponse(
        ErrorSerializer,
        description="A header, or the headers together, too large for the server "
        "(`request_too_large`, answered by gunicorn before the application).",
    ),
    503: OpenApiResponse(
        ErrorSerializer,
        description="The database is unreachable (`database_unavailable`) or busy "
        "(`database_busy`, with `Retry-After`); nothing was written.",
    ),
}
# A list's `cursor` that does not name a page: DRF's pagination answers 404.
CURSOR_NOT_FOUND = OpenApiResponse(
    ErrorSerializer, description="Unknown id, or a `cursor` that names no page (`not_found`)."
)

# In order: a subclass before the class it refines.
_DRF_CODES = {
    KeyNotForAgent: "key_not_for_agent",
    exceptions.ParseError: "invalid_json",
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "authentication_failed",
    exceptions.PermissionDenied: "permission_denied",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "throttled",
}


class ApiError(exceptions.APIException):
    """Raised by views for errors that are the interface's own (unknown ids in a URL)."""

    def __init__(self, message: str, *, code: str, status_code: int, details: dict | None = None):
        super().__init__(message)
        self.status_code = status_code
        self.error_code = code
        self.details = details or {}


def errors(*codes: int, paginated: bool = False) -> dict[int, OpenApiResponse]:
    """The documented error responses of an endpoint, by status code. Every request can meet
    bad input at the edge (400; a request line or headers too long for the server, 414 and
    431) and an unreachable or busy database (503)."""
    documented = {code: ERRORS[code] for code in sorted({400, *codes, 414, 431, 503})}
    if paginated:
        documented[404] = CURSOR_NOT_FOUND
    return documented


def not_found(what: str) -> ApiError:
    return ApiError(f"No {what} with that id.", code=f"{what}_not_found", status_code=404)


HOST_QUOTED_MAX = 100  # a Host header is the sender's: a bounded part of it is quoted


def unserved_host(host: str) -> str:
    """The message refusing a request for a host outside ALLOWED_HOSTS, the REST API's and
    MCP's alike."""
    return f"This server does not answer for the host {host[:HOST_QUOTED_MAX]!r} (ALLOWED_HOSTS)."


def unreadable_body(exc: BaseException) -> str:
    """Why a body could not be read: the connection closed early, or the body did not arrive
    within gunicorn's deadline for it (config/gunicorn.py, `BodyDeadline`: a TimeoutError)."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, TimeoutError):
            return f"The body could not be read: {cause}."
        cause = cause.__cause__
    return UNREADABLE_BODY


def body(message: str, code: str, details: dict | None = None) -> dict:
    payload: dict[str, Any] = {"error": message, "code": code}
    if details:
        payload["details"] = details
    return payload


def _first_message(detail) -> str:
    if isinstance(detail, dict):
        for field, value in detail.items():
            text = _first_message(value)
            return text if field == "non_field_errors" else f"{field}: {text}"
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return str(detail)


# A refusal's `details.fields` holds at most this many messages, in the order they were found;
# `fields_left_off` counts the rest. A checkpoint of 1,000 items each refused for 400 fields
# had answered 10 MB, every message named.
DETAILS_NAMED = 20


def bounded(detail: Any, budget: int = DETAILS_NAMED) -> tuple[Any, int]:
    """`detail` (a serializer's errors: dicts and lists of messages) with its first `budget`
    messages, and how many were left off."""
    kept: list[int] = [budget]  # what is left to keep, shared down the walk
    left_off = 0

    def keep(value: Any) -> Any:
        nonlocal left_off
        if isinstance(value, dict):
            pairs = ((key, keep(item)) for key, item in value.items())
            return {key: item for key, item in pairs if item is not None and item not in ([], {})}
        if isinstance(value, list) and value and isinstance(value[0], (dict, list)):
            return [keep(item) for item in value]  # a list's items, each at its index
        if isinstance(value, list):
            shown, kept[0] = value[: max(kept[0], 0)], kept[0] - len(value)
            left_off += len(value) - len(shown)
            return shown
        if kept[0] > 0:
            kept[0] -= 1
            return value
        left_off += 1
        return None

    return keep(detail), left_off


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        _refusal_noted(context, exc.status, exc.code)
        return Response(body(exc.message, exc.code, exc.details), status=exc.status)
    if isinstance(exc, ApiError):
        _refusal_noted(context, exc.status_code, exc.error_code)
        return Response(body(str(exc.detail), exc.error_code, exc.details), status=exc.status_code)
    if isinstance(exc, UnreadablePostError):  # the client left before sending all of it
        return Response(body(unreadable_body(exc), "invalid"), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, RequestDataTooBig):
        return Response(
            body("The request body is too large.", "content_too_large"),
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        fields, left_off = bounded(exc.detail)
        details = {"fields": fields, **({"fields_left_off": left_off} if left_off else {})}
        response.data = body(_first_message(exc.detail), "invalid", details)
        return response
    code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), "error")
    message = exc.detail if isinstance(exc.detail, str) else _first_message(exc.detail)
    response.data = body(str(message), code)
    return response


# The refusals a client meets in the ordinary course, the request being sound: an id deleted
# since, a conflict with the state (`nothing_to_apply`, `drawer_name_taken`). A refused input
# (400) is the client's mistake and stays Django's warning.
EXPECTED_REFUSALS = (404, 409)


def _refusal_noted(context: dict, status_code: int, code: str) -> None:
    """An answer the API means to give: logged as the request's line with its code, not as
    Django's warning (`config.observability.ExpectedRefusalFilter`)."""
    request = context.get("request")
    if request is not None and status_code in EXPECTED_REFUSALS:
        refusal_noted(getattr(request, "_request", request), code)


@csrf_exempt
def no_such_route(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """Any path under /api/ that no route matches, whatever the method: the API's JSON 404 with
    DEBUG on as well as off (Django's handler404 only answers with DEBUG off; with it on, its
    HTML debug page would). A GET of a route's path without its slash (`/api/docs`) is
    redirected to it, as `CommonMiddleware` would were this route not matching everything."""
    if (
        settings.APPEND_SLASH
        and request.method in ("GET", "HEAD")
        and not request.path_info.endswith("/")
        and _a_route(f"{request.path_info}/", getattr(request, "urlconf", None))
    ):
        return HttpResponsePermanentRedirect(request.get_full_path(force_append_slash=True))
    return not_found_response()


def not_found_response() -> JsonResponse:
    """The API's 404 for a path it has no route or object for (here, and Django's handler404)."""
    return JsonResponse(body("No such API endpoint or object.", "not_found"), status=404)


def _a_route(path: str, urlconf: str | None) -> bool:
    """A route other than this catch-all matches the path."""
    try:
        return resolve(path, urlconf).url_name != "no-such-route"
    except Resolver404:
        return False


READ_METHODS = ("GET", "HEAD")


def read_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A view read with GET or HEAD: any other method is the API's JSON 405 with `Allow` (the
    schema and its docs, whose own answers were YAML or HTML; the machines' endpoints, whose
    `require_safe` answered an empty HTML 405). `wraps` keeps the view's `csrf_exempt`."""

    @wraps(view)
    def refuse_other_methods(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method in READ_METHODS:
            return view(request, *args, **kwargs)
        message = f'Method "{request.method}" not allowed.'
        response = JsonResponse(body(message, "method_not_allowed"), status=405)
        response["Allow"] = ", ".join(READ_METHODS)
        return response

    return refuse_other_methods
