"""What the console's views share: the decide permission check, the queue filters, and
the query strings and return addresses they pass along."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import wraps
from urllib.parse import urlsplit

from django import forms
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.template.loader import render_to_string
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


# Parameter names that are no word a refusal otherwise uses, so are taken for a field wherever
# one holds them; any other is a field's name only as a refusal's first word (`rule`, `type`).
_FIELD_WORDS = re.compile(r"\b(min_similarity|max_similarity|since|until)\b")


def in_console_words(message: str, form: forms.Form) -> str:
    """A filter form's refusal naming its fields by their labels (a form's labels are the ones
    its page shows): "“Similarity from” must not be above “Similarity to”." for
    "min_similarity must not be above max_similarity.". The form words a refusal with the
    parameters' names, as the API shows it; the console, with the fields a curator sees."""
    labels = {name: str(form[name].label) for name in form.fields}

    def quoted(name: str) -> str | None:
        return f"“{labels[name]}”" if name in labels else None

    name, space, rest = message.partition(" ")
    field = name.rstrip(":")
    if first := quoted(field):
        message = f"{first}{name[len(field) :]}{space}{rest}"
    return _FIELD_WORDS.sub(lambda found: quoted(found.group(1)) or found.group(0), message)


def filters_or_refusal(
    form: QueueFilterForm,
) -> tuple[selectors.QueueFilters, DomainError | None]:
    """The form's filters, or the defaults and the first error."""
    try:
        return form.filters(), None
    except DomainError as error:
        return selectors.QueueFilters(), error


def filters_or_defaults(form: QueueFilterForm) -> tuple[selectors.QueueFilters, str | None]:
    """The form's filters, or the defaults and the first error (in the console's words)."""
    filters, refusal = filters_or_refusal(form)
    return filters, None if refusal is None else in_console_words(refusal.message, form)


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


REFUSAL_TITLES = {400: "Bad request", 411: "Length required", 503: "Unavailable"}


def refusal_page(
    message: str, status: int = 400, request: HttpRequest | None = None
) -> HttpResponse:
    """The console's page for a request refused before any work (templates/refusal.html): its
    header, a way back, nothing changed. Without `request` it asks nothing of one, so the edge
    can answer with it before a session or a user is read (`config.middleware`)."""
    title = REFUSAL_TITLES.get(status, "Refused")
    page = render_to_string("refusal.html", {"title": title, "message": message}, request)
    return HttpResponse(page, status=status, content_type="text/html; charset=utf-8")
