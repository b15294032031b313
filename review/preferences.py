"""A user's console settings in the session: copied there from `ConsolePreferences` at login
(and on every change, `review.services.preferences`), so that a page reads them from the session
it loads anyway instead of with a query of its own.

Imports no model: `review.apps` connects the login receiver before the models are loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django.apps import apps

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
    from django.http import HttpRequest

# The session key: whether letter keys decide and move. On unless the user turned it off.
SINGLE_KEY_SHORTCUTS = "console_single_key_shortcuts"


def single_key_shortcuts(request: HttpRequest) -> bool:
    session = getattr(request, "session", None)
    return bool(session.get(SINGLE_KEY_SHORTCUTS, True)) if session is not None else True


def preferences_to_session(
    sender: Any, request: HttpRequest | None, user: AbstractBaseUser | AnonymousUser, **kwargs: Any
) -> None:
    """Django's `user_logged_in` signal: the user's stored preferences into the new session."""
    if request is None or not hasattr(request, "session"):
        return
    preferences = apps.get_model("review", "ConsolePreferences")
    stored = preferences.objects.filter(user_id=cast(int, user.pk)).first()
    request.session[SINGLE_KEY_SHORTCUTS] = stored.single_key_shortcuts if stored else True
