"""The edge: what every request is checked for before a view runs, and what a view's database
failure becomes.

- A NUL or a lone surrogate in the path, a query parameter (name or value) or a console form
  field is refused with 400 `invalid`, naming the parameter: PostgreSQL can store neither, and no
  filter needs them. JSON bodies are checked by the API's parser (`api.parsers`), same rule.
- A path or query string whose percent-escapes do not decode as UTF-8 (`%ff`, an overlong
  `%c0%af`, a surrogate `%ed%a0%80`) is refused with 400 `invalid`, naming the part: Django would
  keep `%FF` as text (a wing named so) or read U+FFFD in its place.
- A body sent with a transfer coding and no Content-Length (`Transfer-Encoding: chunked`) is
  refused with 411 `unsupported_request`: Django reads a body by its Content-Length, so it read
  nothing and the view ran as if the body were empty (a supersede without `by`).
- A console form whose body Django cannot parse (a charset other than UTF-8, a broken multipart
  body, one cut short by a client that left, URL-encoded fields that are not UTF-8) is refused
  with 400 `invalid`: Django raises again at every read of the form, the error page's own CSRF
  check included, so left to the error page it became a 500.
- An API query parameter given more than once is refused with 400 `invalid`, naming it: each
  takes one value, and a repeat was read as its last (`api.query`).
- A database that cannot be reached answers 503 `database_unavailable`, and one that is busy
  (SQLite's "database is locked", a PostgreSQL lock timeout, deadlock or serialisation failure)
  503 `database_busy`, both with `Retry-After`: a client can retry, and nothing was written, since
  every write is one transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.core.exceptions import BadRequest, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, JsonResponse, UnreadablePostError
from django.http.multipartparser import MultiPartParserError

from api.errors import body
from api.query import each_given_once
from config.errors import API_PREFIX, is_api
from dedup.database import database_failure
from dedup.errors import InvalidInput
from dedup.validation import UNSTORABLE_MESSAGE, unstorable
from review.views.common import refusal_page

logger = logging.getLogger("castellan.edge")

UNREADABLE_FORM = "The form's body cannot be read: send it as UTF-8 form data."


def unreadable_form(request: HttpRequest) -> bool:
    """A console POST whose form Django cannot parse, or whose URL-encoded fields do not decode
    as UTF-8 (Django reads U+FFFD for the broken bytes: a note sent as `%ED%A0%80` was stored as
    "\ufffd\ufffd\ufffd", where the same bytes in a query string are refused)."""
    if is_api(request) or request.method != "POST":
        return False
    try:
        request.POST  # noqa: B018 - parsed here, where a failure can still be answered
    except (BadRequest, SuspiciousOperation, MultiPartParserError, UnreadablePostError):
        return True
    if request.content_type != "application/x-www-form-urlencoded":
        return False
    try:  # read whole already, by the parse above
        unquote_to_bytes(request.body.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def unstorable_parameter(request: HttpRequest) -> str | None:
    """The name of the first part of the request that holds a NUL or a lone surrogate."""
    if unstorable(request.path):
        return "path"
    forms = [request.GET]
    if not is_api(request) and request.method == "POST":
        forms.append(request.POST)
    for form in forms:
        for name, values in form.lists():
            if unstorable(name) or any(unstorable(value) for value in values):
                return name if not unstorable(name) else "query"
    return None


UNREAD_BODY = (
    "Send the body with a Content-Length header: a body sent with Transfer-Encoding (chunked) "
    "is not read."
)
NOT_UTF8 = "is not UTF-8 once percent-decoded: percent-encode the UTF-8 bytes of each character."


def unread_body(request: HttpRequest) -> bool:
    """A request with a transfer coding and no Content-Length, whose body Django would not read."""
    return "Transfer-Encoding" in request.headers and not request.META.get("CONTENT_LENGTH")


def undecodable_part(request: HttpRequest) -> str | None:
    """The part ("path" or "query") whose percent-escapes do not decode as UTF-8, or None. Django
    replaces the path's broken bytes before any middleware runs, so the path is read as the
    server got it: ASGI's `raw_path`, gunicorn's `RAW_URI` (another WSGI server's path is not
    checked)."""
    scope = getattr(request, "scope", None)
    if scope is not None:
        path = scope.get("raw_path") or b""
    else:
        path = request.META.get("RAW_URI", "").partition("?")[0].encode("latin-1", "replace")
    query = request.META.get("QUERY_STRING", "").encode("latin-1", "replace").replace(b"+", b" ")
    for name, raw in (("path", path), ("query", query)):
        try:
            unquote_to_bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            return name
    return None


def refusal(
    request: HttpRequest, message: str, code: str, status: int, details: dict | None = None
) -> HttpResponse:
    if is_api(request):
        return JsonResponse(body(message, code, details), status=status)
    # The console's page (a bare "<h1>400</h1>" had no way back, no language).
    return refusal_page(message, status)


class EdgeMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if unread_body(request):
            return refusal(request, UNREAD_BODY, "unsupported_request", 411)
        part = undecodable_part(request)
        if part is not None:
            return refusal(request, f"The {part} {NOT_UTF8}", "invalid", 400)
        if unreadable_form(request):
            return refusal(request, UNREADABLE_FORM, "invalid", 400)
        name = unstorable_parameter(request)
        if name is not None:
            return refusal(request, f"{name}: {UNSTORABLE_MESSAGE}", "invalid", 400)
        if request.path.startswith(API_PREFIX):
            try:
                each_given_once(request.GET)
            except InvalidInput as repeated:
                return refusal(request, repeated.message, repeated.code, 400, repeated.details)
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        failure = database_failure(exception)
        if failure is None:
            return None
        code, message, retry_after = failure
        logger.warning("%s on %s %s: %s", code, request.method, request.path, exception)
        response = refusal(request, message, code, 503)
        response["Retry-After"] = str(retry_after)
        return response
