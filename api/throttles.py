"""Throttling the API's writes per authenticated identity, in the cache (Redis when REDIS_URL is
set, so every web process counts together)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rest_framework.authtoken.models import Token
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

if TYPE_CHECKING:  # rest_framework.views imports the throttle classes named in the settings
    from rest_framework.views import APIView


def identity(request: Request) -> str | None:
    """Who is writing, whatever the authentication class: the key when it is an object of its own
    (an agent key, several per agent, each counted apart), else the user. A DRF token's primary
    key is the secret itself, so such a request is counted by its user instead."""
    auth: Any = request.auth
    key_id = getattr(auth, "pk", None)
    if auth is not None and not isinstance(auth, Token) and key_id is not None:
        return f"key:{type(auth).__name__}:{key_id}"
    if request.user and request.user.is_authenticated:
        return f"user:{request.user.pk}"
    return None


class WriteRateThrottle(SimpleRateThrottle):
    """Writes (any method but GET, HEAD, OPTIONS) per identity, at the rate of the view's
    `throttle_scope` (default "writes") in DEFAULT_THROTTLE_RATES; no rate, no limit.

    The rate is read per request rather than when the class is built, so a changed setting
    applies at once.
    """

    default_scope = "writes"

    def __init__(self) -> None:
        # SimpleRateThrottle reads its rate here from the class's scope; it depends on the view.
        pass

    def allow_request(self, request: Request, view: APIView) -> bool:
        if request.method in SAFE_METHODS:
            return True
        self.scope = getattr(view, "throttle_scope", None) or self.default_scope
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
        self.rate = rate if isinstance(rate, str) else None
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_cache_key(self, request: Request, view: APIView) -> str:
        ident = identity(request) or f"address:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
