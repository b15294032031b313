"""The admin's changelists apply whatever lookups and selections a query string or an action's
form names (Django lets any lookup on a model's own fields through): a year past 9999, a range
that is not two values, a selected id that is no id, a number SQLite cannot bind or a value
PostgreSQL refuses fail while the page is built or its query runs, not where Django checks its
lookups (which it does with a naked `except` for the same reason). Here such a failure is the
message it is and the changelist again, unfiltered, for every model's admin, ours and the
libraries'; never a 500."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import DataError, NotSupportedError, OperationalError, ProgrammingError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

logger = logging.getLogger("castellan.admin")

BAD_INPUT = (
    ValueError,
    TypeError,
    OverflowError,
    IndexError,
    ValidationError,
    DataError,
    NotSupportedError,
)
# The drivers' refusals of a lookup itself (a regex SQLite cannot compile, a search of thousands
# of words, a range of one value bound as two): an OperationalError otherwise means the database
# is unavailable (503, left to `config.middleware`), a ProgrammingError a bug of ours.
DRIVER_REFUSALS = (
    "user-defined function raised exception",
    "Expression tree is too large",
    "Incorrect number of bindings",
    "placeholders but",
)


class AdminChangelistErrors:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        match = request.resolver_match
        if match is None or match.namespace != "admin" or not match.url_name:
            return None
        if not match.url_name.endswith("_changelist") or not _bad_input(exception):
            return None
        logger.warning("admin changelist %s refused: %r", request.get_full_path(), exception)
        messages.error(request, f"That filter or selection cannot be applied: {exception}"[:300])
        return HttpResponseRedirect(request.path)


def _bad_input(exception: Exception) -> bool:
    if isinstance(exception, BAD_INPUT):
        return True
    return isinstance(exception, OperationalError | ProgrammingError) and any(
        refusal in str(exception) for refusal in DRIVER_REFUSALS
    )
