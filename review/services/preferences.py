"""Changing a user's console settings (read from the session: `review.preferences`)."""

from __future__ import annotations

from typing import cast

from django.http import HttpRequest

from review.models import ConsolePreferences
from review.preferences import SINGLE_KEY_SHORTCUTS


def shortcuts_set(*, request: HttpRequest, enabled: bool) -> ConsolePreferences:
    """Turn the signed-in user's single-key shortcuts on or off (WCAG 2.1.4), for this session
    and the next ones. A preference, not a decision about the palace: not audited."""
    preferences, _ = ConsolePreferences.objects.update_or_create(
        user_id=cast(int, request.user.pk), defaults={"single_key_shortcuts": enabled}
    )
    request.session[SINGLE_KEY_SHORTCUTS] = enabled
    return preferences
