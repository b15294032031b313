"""What the console's views share: the decide permission check, the queue filters, and
the query strings and return addresses they pass along."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import wraps
from urllib.parse import urlsplit

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django_htmx.middleware import HtmxDetails

from dedup.errors import DomainError
from review import selectors
from review.curators import DECIDE_PERMISSION
from review.forms import QueueFilterForm


class HtmxHttpRequest(HttpRequest):
    """A request as the console's views see it: django-htmx's middleware sets `htmx` on it."""

    htmx: HtmxDetails


def wants_partial(request: HtmxHttpRequest) -> bool:
    """htmx swaps a partial in place, except when it restores a page the Back button returned to
    that it kept no copy of: then it asks for the whole page (`HX-History-Restore-Request`)."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def require_decide(request: HttpRequest) -> None:
    if not request.user.has_perm(DECIDE_PERMISSION):
        raise PermissionDenied("Deciding needs the curators' decide permission.")


# The queue's and the audit log's filter fields as the console labels them: a refusal names the
# parameter (the API's words, `min_similarity must be ...`), the console the field a curator sees.
FILTER_LABELS = {
    "type": "Type",
    "rule": "Rule",
    "wing": "Wing",
    "room": "Room",
    "kind": "Entity kind",
    "min_similarity": "Similarity from",
    "max_similarity": "Similarity to",
    "status": "Status",
    "order": "Order",
    "q": "Search",
    "run": "Sweep proposals",
    "actor": "Curator",
    "action": "Action",
    "item": "Item",
    "since": "From",
    "until": "Until",
}


# Names that are no English word, so may be taken for a field wherever a message holds them.
_FIELD_WORDS = re.compile(r"\b(min_similarity|max_similarity|since|until)\b")


def in_console_words(message: str) -> str:
    """A filter's refusal naming fields by their labels: "“Similarity from” must not be above
    “Similarity to”." for "min_similarity must not be above max_similarity."."""
    name, space, rest = message.partition(" ")
    label = FILTER_LABELS.get(name.rstrip(":"))
    if label:
        message = f"“{label}”{name[len(name.rstrip(':')) :]}{space}{rest}"
    return _FIELD_WORDS.sub(lambda found: f"“{FILTER_LABELS[found.group(1)]}”", message)


def filters_or_defaults(form: QueueFilterForm) -> tuple[selectors.QueueFilters, str | None]:
    """The form's filters, or the defaults and the first error (in the console's words)."""
    try:
        return form.filters(), None
    except DomainError as error:
        return selectors.QueueFilters(), in_console_words(error.message)


def query_without(request: HttpRequest, *names: str) -> str:
    params = request.GET.copy()
    for name in names:
        params.pop(name, None)
    return params.urlencode()


def safe_next(request: HttpRequest, default: str) -> str:
    target = request.POST.get("next") or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return target
    return default


def htmx_page(request: HttpRequest) -> str | None:
    """The page an htmx request says it was sent from (`HX-Current-URL`), if ours and readable
    (urllib refuses some URLs outright: "http://[" is an invalid IPv6 one); else None."""
    htmx = getattr(request, "htmx", None)
    try:
        return htmx.current_url_abs_path if htmx else None
    except ValueError:
        return None


def referer_path(request: HttpRequest) -> str:
    """The path (and query) of the page the request came from, if it is one of ours: the
    browser's Referer, of this host, its path itself safe ("//elsewhere/" would leave the site);
    "" otherwise."""
    referer = request.headers.get("Referer", "")
    hosts = {request.get_host()}
    if not url_has_allowed_host_and_scheme(referer, allowed_hosts=hosts):
        return ""
    page = urlsplit(referer)
    path = page.path + (f"?{page.query}" if page.query else "")
    return path if url_has_allowed_host_and_scheme(path, allowed_hosts=hosts) else ""


def post_or_show(to: Callable[..., str]) -> Callable:
    """An action's URL takes POST; reached by GET (a reload, a bookmark, the `next` of a login
    after the session ended mid-work) it redirects to the page the action is on, `to(request,
    **url kwargs)`, instead of answering a bare 405."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method in ("GET", "HEAD"):
                return redirect(to(request, **kwargs))
            if request.method != "POST":
                return HttpResponseNotAllowed(["POST"])
            return view(request, *args, **kwargs)

        return wrapped

    return decorate
