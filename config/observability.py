"""Watching it run: a request id on every request and log record, one log line per request (JSON
when CASTELLAN_LOG_FORMAT=json), and the request counters and latencies of `/metrics`.

`RequestMiddleware` comes first in MIDDLEWARE, so everything after it, redirects and static files
included, is counted and logged under the request's id.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from django.http import HttpRequest, HttpResponse
from prometheus_client import Counter, Histogram

from dedup import metrics

logger = logging.getLogger("castellan.request")

REQUEST_ID_HEADER = "X-Request-ID"
# A client's id is kept when it is a plain token of at most 64 characters; anything else is
# replaced, so a log line cannot be forged through the header.
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")

REQUESTS = Counter(
    "castellan_http_requests",
    "HTTP requests answered, by method, view (URL pattern name) and status.",
    ["method", "view", "status"],
)
LATENCY = Histogram(
    "castellan_http_request_duration_seconds",
    "Time from the request reaching Django to the response leaving it, by method and view.",
    ["method", "view"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)

_request_id: ContextVar[str] = ContextVar("castellan_request_id", default="")
# The request's id is kept on the request too, for the records logged once the middleware has
# returned (see RequestIdFilter).
REQUEST_ID_ATTRIBUTE = "castellan_request_id"


# A request the API refused as it is meant to (a domain error's code, as `nothing_to_apply`; an
# unknown id) carries the code here (`api.errors`): its own line says it (`code=...`), and
# Django's warning about it is dropped (`ExpectedRefusalFilter`).
REFUSAL_ATTRIBUTE = "castellan_refusal"


def refusal_noted(request: HttpRequest, code: str) -> None:
    setattr(request, REFUSAL_ATTRIBUTE, code)


class ExpectedRefusalFilter(logging.Filter):
    """On `django.request`: drops its line about a 4xx the API answered as it is meant to (a
    409 "Nothing to apply" sent twice, a 404 for an id deleted since). A client retrying it is
    no fault of the server's, and a WARNING at each would bury the real ones: `castellan.request`
    logs the request with its code at INFO. A refusal of the request's input (400 `invalid`),
    an unknown route, a 403 and every 5xx are logged as Django logs them."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        refused = getattr(getattr(record, "request", None), REFUSAL_ATTRIBUTE, "")
        return not (refused and isinstance(status, int) and status < 500)


class RequestIdFilter(logging.Filter):
    """Gives every log record the id of the request it was written under ("" outside one).

    Django's handler logs a 4xx or 5xx answer (`django.request`: "Not Found: /api/nosuch")
    after the middleware has returned, when the id is no longer current; such a record names its
    request, which keeps its id. Those lines are kept though `castellan.request` logs every
    request too: they are at WARNING and ERROR, so they remain when CASTELLAN_LOG_LEVEL hides the
    INFO request lines, and the shared id ties the two together when both show."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            request = getattr(record, "request", None)
            record.request_id = getattr(request, REQUEST_ID_ATTRIBUTE, "") or _request_id.get()
        return True


class RefusalFilter(logging.Filter):
    """A request Django refuses (a PermissionDenied 403, a disallowed host or another
    SuspiciousOperation 400) is the client's doing, not the server's failure: one line at
    WARNING, without the traceback Django attaches (35 lines for an admin 403) and, for
    `django.security`, below the ERROR that error reporting would take for a fault. Django's
    records about an answer carry its `status_code`; a 5xx keeps its traceback and level."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and status < 500:
            record.exc_info, record.exc_text = None, None
            if record.levelno > logging.WARNING:
                record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def request_id_of(request: HttpRequest) -> str:
    given = request.headers.get(REQUEST_ID_HEADER, "")
    return given if _REQUEST_ID.match(given) else uuid.uuid4().hex


def view_name(request: HttpRequest) -> str:
    """A bounded label for the metrics: the URL pattern's name, never the raw path."""
    match = request.resolver_match
    if match is None:
        return "static" if request.path.startswith("/static/") else "unresolved"
    return match.view_name or "unnamed"


def who(request: HttpRequest) -> dict[str, str]:
    """The user, and the API key when the authentication names one, without any secret: DRF
    copies `user` and `auth` onto the Django request when it authenticates."""
    found: dict[str, str] = {}
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        found["user"] = user.get_username()
    auth = getattr(request, "auth", None)
    key = getattr(auth, "prefix", None) or getattr(auth, "token_key", None)
    if key:
        found["key"] = str(key)
    agent = getattr(auth, "agent", None)
    if agent:
        found["agent"] = str(agent)
    return found


class RequestMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_of(request)
        setattr(request, REQUEST_ID_ATTRIBUTE, request_id)
        token = _request_id.set(request_id)
        tally = metrics.request_tally_start()
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            duration = time.perf_counter() - started
            response[REQUEST_ID_HEADER] = request_id
            self._record(request, response, duration, dict(tally))
            return response
        finally:
            metrics.request_tally_stop()
            _request_id.reset(token)

    def _record(
        self, request: HttpRequest, response: HttpResponse, duration: float, tally: dict[str, int]
    ) -> None:
        view = view_name(request)
        REQUESTS.labels(request.method or "", view, str(response.status_code)).inc()
        LATENCY.labels(request.method or "", view).observe(duration)
        fields: dict[str, Any] = {
            "request_id": _request_id.get(),
            "method": request.method,
            "path": request.path,
            "status": response.status_code,
            "duration_ms": round(duration * 1000, 2),
            **who(request),
        }
        if tally:
            fields["verdicts"] = tally
        refused = getattr(request, REFUSAL_ATTRIBUTE, "")
        if refused:
            fields["code"] = refused
        logger.info(
            "%s %s %s %.1fms %s",
            request.method,
            request.path,
            response.status_code,
            duration * 1000,
            " ".join(
                f"{k}={v}" for k, v in fields.items() if k in {"user", "key", "verdicts", "code"}
            ),
            extra=fields,
        )
