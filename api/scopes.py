"""What one request may do: its rights and the wings it reaches.

A person's role gives their rights: a viewer reads; a curator and an admin read, write and
delete (a curator also decides, see `CanDecide`). An agent (`api.models.is_agent`) writes too. An
agent key narrows its user's rights to the key's own rights and wings. The rules are applied by
`api.permissions`; this object only answers questions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q
from rest_framework.request import Request

from api.models import ALL_WINGS, RIGHTS, AgentKey, is_agent
from dedup.validation import lookup_form
from review.curators import DECIDE_PERMISSION


@dataclass(frozen=True)
class Scope:
    """`wings` is None when every wing is reached."""

    agent: str
    rights: frozenset[str]
    wings: frozenset[str] | None

    def allows(self, right: str, wing: str | None = None) -> bool:
        return right in self.rights and self.reaches(wing)

    def reaches(self, wing: str | None) -> bool:
        """The wing, named as a request names it, is one of the key's: in the form every read
        and write finds a wing by (`lookup_form`: "notes " is notes, "cafe\u0301" is café), so
        a key is judged on the wing the request will reach."""
        return self.wings is None or wing is None or lookup_form(wing) in self.wings

    def holds(self, stored: str | None) -> bool:
        """The wing named as it is stored (a drawer's) is one of the key's, as stored: exactly,
        so a look-alike wing `api/0002`, `0003` or `0004` left apart (its name not in the form a
        new one is given) is held only by a key made for that very name, and `wing_filter`
        agrees."""
        return self.wings is None or stored is None or stored in self.wings

    def wing_filter(self, path: str) -> Q:
        """Rows whose wing (at `path`, e.g. `drawer__room__wing__name`) is reached."""
        return Q() if self.wings is None else Q(**{f"{path}__in": sorted(self.wings)})


def person_rights(user: object, *, agent_key: bool = False) -> frozenset[str]:
    """A viewer reads; curators, admins and agents may also write and delete. An agent is
    `is_agent`'s: a person's login put in the agents' group is no agent, and writes only by its
    role. Signed in with an agent key, whether the user is an agent is asked first (one query,
    where the permission reads the user's and their groups' permissions: two); otherwise the
    permission is."""
    if not getattr(user, "is_authenticated", False):
        return frozenset()
    if user.is_superuser:  # type: ignore[attr-defined]
        return frozenset(RIGHTS)
    checks = [
        lambda: is_agent(user),
        lambda: user.has_perm(DECIDE_PERMISSION),  # type: ignore[attr-defined]
    ]
    if not agent_key:
        checks.reverse()
    return frozenset(RIGHTS) if any(check() for check in checks) else frozenset({"read"})


def scope_of(request: Request) -> Scope:
    """The request's scope, worked out once per request."""
    cached = getattr(request, "_castellan_scope", None)
    if cached is not None:
        return cached
    scope = scope_for(request.user, request.auth)
    request._castellan_scope = scope  # type: ignore[attr-defined]
    return scope


def scope_for(user: Any, auth: object) -> Scope:
    """The scope of a user signed in with `auth` (an agent key, a token or a session): the one
    rule for the REST API and the MCP server alike."""
    if isinstance(auth, AgentKey) and getattr(auth, "for_agent", False):
        rights = frozenset(RIGHTS)  # an agent: the sign-in's own query said so (`for_agent`)
    else:
        rights = person_rights(user, agent_key=isinstance(auth, AgentKey))
    wings: frozenset[str] | None = None
    if isinstance(auth, AgentKey):
        rights &= frozenset(auth.rights)
        wings = None if ALL_WINGS in auth.wings else frozenset(auth.wings)
    return Scope(agent=user.get_username(), rights=rights, wings=wings)
