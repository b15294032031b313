"""Agent keys in `Authorization: Token <key>` or `Authorization: Bearer <key>` (MCP clients send
Bearer). A credential that is not an agent key is left to the next class (people's DRF tokens),
except under Bearer, where a person's DRF token is accepted here too."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, cast

from django.db import DatabaseError
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import (
    BaseAuthentication,
    TokenAuthentication,
    get_authorization_header,
)
from rest_framework.request import Request

from api.models import AgentKey
from dedup.validation import unstorable

logger = logging.getLogger("castellan.api")

KEYWORDS = {"token", "bearer"}
# last_used_at is written at most this often per key, so reads do not each cost a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def _note_use(key: AgentKey, now: datetime) -> None:
    """Record the key's last use, best effort: a request is never refused because the record
    could not be written (SQLite's write lock held by a writer, a read-only replica)."""
    try:
        AgentKey.objects.filter(pk=key.pk).update(last_used_at=now)
    except DatabaseError:
        logger.warning("could not record the last use of agent key %s", key.prefix, exc_info=True)


class KeyNotForAgent(exceptions.PermissionDenied):
    """403 `key_not_for_agent` (`api.errors`): an agent key whose user is a person's login (a
    curator, a staff member, a login with a password, even in the agents' group:
    `api.models.agent_condition`), made before the admin and `agent_key create` were held to
    agents, or whose login was made a person's since. Such a key wrote drawers and entities, and
    decided review items, as that person: it is refused for everything, on REST and MCP alike,
    until an admin replaces it."""


def key_not_for_agent(key: AgentKey) -> KeyNotForAgent:
    return KeyNotForAgent(
        f"This agent key ({key.prefix}) was made for a person's login, not for an agent, and "
        "is refused for everything: ask an admin for a key made for an agent. The admin "
        f"revokes this one (`manage.py agent_key revoke {key.prefix}`, or the admin's Agent "
        "keys page) and makes one with `manage.py agent_key create AGENT --wings ... --rights "
        "...`, AGENT being a name no person's login holds."
    )


class AgentKeyAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[object, object] | None:
        parts = get_authorization_header(request).split()
        if len(parts) != 2 or parts[0].lower().decode(errors="replace") not in KEYWORDS:
            return None
        keyword = parts[0].lower().decode()
        try:
            credential = parts[1].decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed("Invalid key.") from None
        if unstorable(credential):  # PostgreSQL refuses to look one up (gunicorn refuses a NUL
            raise exceptions.AuthenticationFailed("Invalid key.")  # in a header first)
        if "." not in credential:
            if keyword == "bearer":
                return TokenAuthentication().authenticate_credentials(credential)
            return None
        return self.authenticate_key(credential)

    def authenticate_key(self, credential: str) -> tuple[object, AgentKey]:
        try:
            key = cast(AgentKey, AgentKey.objects.get_from_key(credential))
        except AgentKey.DoesNotExist:
            raise exceptions.AuthenticationFailed("Invalid, revoked or unknown key.") from None
        if key.has_expired:
            raise exceptions.AuthenticationFailed("This key has expired.")
        if not key.user.is_active:
            raise exceptions.AuthenticationFailed("The key's agent is inactive.")
        if not getattr(key, "for_agent", False):  # annotated by `get_usable_keys`
            raise key_not_for_agent(key)
        now = timezone.now()
        if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION:
            _note_use(key, now)
        return key.user, key

    def authenticate_header(self, request: Request) -> str:
        return "Token"


def identity_for_key(credential: str) -> tuple[Any, object]:
    """The user and the auth object (an agent key, or a person's DRF token) for a credential
    sent as `Authorization: Bearer <credential>`: what the MCP server signs callers in with, by
    the same rules as the REST API. Raises AuthenticationFailed."""
    credential = credential.strip()
    if "." not in credential:
        return TokenAuthentication().authenticate_credentials(credential)
    return AgentKeyAuthentication().authenticate_key(credential)
