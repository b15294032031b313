"""The edge: what every request is checked for before a view runs, and what a view's database
failure becomes.

- A NUL or a lone surrogate in the path, a query parameter (name or value) or a console form
  field is refused with 400 `invalid`, naming the parameter: PostgreSQL can store neither, and no
  filter needs them. JSON bodies are checked by the API's parser (`api.parsers`), same rule.
- A console form whose body Django cannot parse (a charset other than UTF-8, a broken multipart
  body) is refused with 400 `invalid`: Django raises again at every read of the form, the error
  page's own CSRF check included, so left to the error page it became a 500.
- A database that cannot be reached answers 503 `database_unavailable`, and one that is busy
  (SQLite's "database is locked", a PostgreSQL lock timeout, deadlock or serialisation failure)
  503 `database_busy`, both with `Retry-After`: a client can retry, and nothing was written, since
  every write is one transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.core.exceptions import BadRequest, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.utils.html import escape

from api.errors import body
from config.errors import is_api
from dedup.database import database_failure
from dedup.validation import UNSTORABLE_MESSAGE, unstorable

logger = logging.getLogger("castellan.edge")

UNREADABLE_FORM = "The form's body cannot be read: send it as UTF-8 form data."


def unreadable_form(request: HttpRequest) -> bool:
    """A console POST whose form Django cannot parse."""
    if is_api(request) or request.method != "POST":
        return False
    try:
        request.POST  # noqa: B018 - parsed here, where a failure can still be answered
    except (BadRequest, SuspiciousOperation, MultiPartParserError):
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


def refusal(request: HttpRequest, message: str, code: str, status: int) -> HttpResponse:
    if is_api(request):
        return JsonResponse(body(message, code), status=status)
    page = f"<!doctype html><title>{status}</title><h1>{status}</h1><p>{escape(message)}</p>"
    return HttpResponse(page, status=status, content_type="text/html; charset=utf-8")


class EdgeMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if unreadable_form(request):
            return refusal(request, UNREADABLE_FORM, "invalid", 400)
        name = unstorable_parameter(request)
        if name is not None:
            return refusal(request, f"{name}: {UNSTORABLE_MESSAGE}", "invalid", 400)
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
