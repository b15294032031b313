"""The console's answer to a session that ended mid-work (issue 13, defect 2).

`login_required` answers an anonymous request with a redirect to the login page. For an htmx
request the browser follows that redirect inside the XMLHttpRequest, and htmx swaps the login form
into the item it was deciding. Here such a redirect becomes `HX-Redirect` to the login page, whose
`next` is the page the curator is on (htmx's `HX-Current-URL`), so after logging in they are back
on it.

A decision posted without a session is not replayed after login: the curator is back on the item
with the decision still to make, and a message says it was not made. Replaying it would apply a
destructive decision the curator cannot see, perhaps as another person who logs in at that desk,
on an item that another curator may have decided meanwhile; pressing the key again costs less
than any of that.

If the curator logged in again in the other tab, the page's CSRF token is an old one and the
decision fails the CSRF check instead: an htmx request then reloads the page (`HX-Refresh`), which
brings a fresh token, with the same message (`csrf_failure`, the CSRF_FAILURE_VIEW). A plain
form gets the console's own page: nothing was done, and a link back. The item page's background
hold renewal never reloads or leaves the page (a note being typed would be lost): it says in
place that the hold was not renewed.

Every response also varies on `HX-Request`: the same URL answers a partial to htmx and a whole
page otherwise, and a browser cache must not hand one for the other (Back after an in-place load).
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render, resolve_url
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django_htmx.http import HttpResponseClientRedirect, HttpResponseClientRefresh

from review.views.common import htmx_page, referer_path

# A decision's view, and the page it is made on (where the curator lands after logging in again).
DECIDE_VIEWS = {"review:decide": "review:item", "review:cluster_decide": "review:cluster"}
HOLD_VIEW = "review:hold"  # the item page's background renewal of the curator's hold
SHOWN_ACTION = 40  # characters of the posted action the message repeats


class SessionEndedMiddleware:
    """Place after django-htmx's middleware (it reads `request.htmx`) and after the messages
    middleware (the message it adds is stored on the way out)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        patch_vary_headers(response, ("HX-Request",))
        if request.user.is_authenticated or not _to_login(response):
            return response
        if _is_hold_renewal(request):  # in the background: never leave the page for the login
            return _hold_not_renewed(request, "your session has ended")
        htmx = getattr(request, "htmx", None)
        back = _decision_item(request)
        if back is None and htmx:
            back = htmx_page(request) or request.get_full_path()
            messages.info(request, "Your session had ended: log in again to go on.")
        if back is None:
            return response
        login = redirect_to_login(back)
        return HttpResponseClientRedirect(login["Location"]) if htmx else login


def _to_login(response: HttpResponse) -> bool:
    if response.status_code != 302:
        return False
    login = resolve_url(settings.LOGIN_URL)
    return urlsplit(response.get("Location", "")).path == login


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A POST with a token older than the session (a login in another tab rotated it): htmx
    reloads the page it came from, except for the hold's background renewal, which never
    reloads the page (a note being typed would be lost); a plain form gets the console's page
    saying nothing was done, with a link back (Django's own page speaks of DEBUG)."""
    if _is_hold_renewal(request):
        return _hold_not_renewed(request, "this page is out of date")
    if request.headers.get("HX-Request") != "true":
        context = {"back": referer_path(request) or reverse("review:queue")}
        return render(request, "csrf_failure.html", context, status=403)
    if _decision_item(request) is None:
        messages.warning(request, "This page was out of date, so nothing was done. Try again.")
    return HttpResponseClientRefresh()


def _is_hold_renewal(request: HttpRequest) -> bool:
    match = request.resolver_match
    return request.method == "POST" and match is not None and match.view_name == HOLD_VIEW


def _hold_not_renewed(request: HttpRequest, why: str) -> HttpResponse:
    """The hold's renewal failed: it says so in place of the hold (and stops; review.js swaps a
    403), and the page stays as it is."""
    match = request.resolver_match
    context = {"ref": match.kwargs.get("item_id", "") if match else "", "renewal_failed": why}
    return render(request, "review/_hold.html", context, status=403)


def _decision_item(request: HttpRequest) -> str | None:
    """For a decision posted without a session: the item's page, with the queue filter it was
    reached from, and a message that the decision was not made."""
    match = request.resolver_match
    if request.method != "POST" or match is None or match.view_name not in DECIDE_VIEWS:
        return None
    item = match.kwargs["item_id"]
    action = request.POST.get("action", "")[:SHOWN_ACTION].replace("_", " ") or "decision"
    messages.warning(
        request,
        f"Your session had ended, so your {action} on {item} was not made. Decide again.",
    )
    query = request.POST.get("query", "")
    page = reverse(DECIDE_VIEWS[match.view_name], args=[item])
    return page + (f"?{query}" if query else "")
