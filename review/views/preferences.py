"""The user's console settings."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from review.services.preferences import shortcuts_set
from review.views.common import post_or_show, refusal_page, safe_next


@login_required
@post_or_show(lambda request: reverse("review:queue"))  # it has no page of its own
def shortcuts(request: HttpRequest) -> HttpResponse:
    """Single-key shortcuts on or off (WCAG 2.1.4), from the header or the keys dialog: "1" or
    "0", another value refused (any but "1" had turned them off, unsaid)."""
    value = request.POST.get("single_key_shortcuts")
    if value not in ("0", "1"):
        return refusal_page("single_key_shortcuts must be 1 (on) or 0 (off).", request=request)
    shortcuts_set(request=request, enabled=value == "1")
    messages.success(request, f"Single-key shortcuts are {'on' if value == '1' else 'off'}.")
    return redirect(safe_next(request, reverse("review:queue")))
