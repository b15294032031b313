"""The user's console settings."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from review.services.preferences import shortcuts_set
from review.views.common import post_or_show, safe_next


@login_required
@post_or_show(lambda request: reverse("review:queue"))  # it has no page of its own
def shortcuts(request: HttpRequest) -> HttpResponse:
    """Single-key shortcuts on or off (WCAG 2.1.4), from the header or the keys dialog."""
    shortcuts_set(request=request, enabled=request.POST.get("single_key_shortcuts") == "1")
    return redirect(safe_next(request, reverse("review:queue")))
