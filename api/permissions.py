"""Who may do what through the API: the rules in one place.

Every view's permission is `ScopedAccess` (the default) and, for deciding, `CanDecide`. A
request's right comes from its method (reads need `read`, writes `write`, a DELETE and a
supersession `delete`); its scope (`api.scopes`) must hold that right for the wing the request
touches. A wing out of a key's reach is not found for a read and forbidden for a write; the
routes that span every wing (the review queue, the audit log, stats, sweeps) need every wing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework import permissions
from rest_framework.request import Request

from api.models import DELETE, READ, WRITE
from api.scopes import Scope, scope_of
from dedup.errors import DomainError, NotFound
from dedup.validation import label_form
from review.curators import DECIDE_PERMISSION

if TYPE_CHECKING:  # rest_framework.views imports this module (the default permission class)
    from rest_framework.views import APIView

WRITE_AS_ANY_AGENT = "palace.write_as_any_agent"

# Routes (by URL name) whose effect is a deletion, whatever their method.
DELETING_ROUTES = {"drawer-supersede", "import-reverse"}
# Routes that read or change rows of every wing at once (every review and sweep route: a test
# holds that no such route is left out; and an entity's aliases).
ALL_WING_ROUTES = {
    "entity-aliases",  # an alias steers the entity's sightings in every wing
    "review-queue",
    "review-decide",
    "review-decisions",
    "review-revert",
    "review-stats",
    "review-clusters",
    "review-cluster",
    "review-cluster-decide",
    "review-batch-revert",
    "sweep-list",
    "sweep-detail",
    "sweep-proposals",
    "sweep-apply",
    "sweep-reverse",
    "sweep-resume",
    "sweep-cancel",
}


def required_right(request: Request) -> str:
    route = request.resolver_match.url_name if request.resolver_match else ""
    if request.method == "DELETE" or route in DELETING_ROUTES:
        return DELETE
    if request.method in permissions.SAFE_METHODS:
        return READ
    return WRITE


class Refused(DomainError):
    """403. A DomainError, answered by the API's exception handler: this module is DRF's default
    permission class, so it cannot import `api.errors` (which imports `rest_framework.views`)."""

    code = "permission_denied"
    status = 403


def refused(message: str, code: str = "permission_denied") -> Refused:
    return Refused(message, code=code)


def out_of_scope(scope: Scope, message: str) -> Refused:
    """403 `out_of_scope`, naming the wings the key does reach (in the message, and as
    `details.wings`), so an agent learns where it may write (a key of every wing is never
    out of scope)."""
    wings = sorted(scope.wings or ())
    reached = ", ".join(repr(wing) for wing in wings) or "none"
    return Refused(
        f"{message} It reaches: {reached}.", code="out_of_scope", details={"wings": wings}
    )


def require(request: Request, right: str, wing: str | None) -> Scope:
    """The request may use `right` on `wing`: otherwise 404 for a read (the wing is not there
    for this key), 403 out_of_scope for a write."""
    return require_in(scope_of(request), right, wing)


def require_in(scope: Scope, right: str, wing: str | None, *, stored: bool = False) -> Scope:
    """`require` for a scope worked out without a DRF request (the MCP server): the right must
    be held too. `stored`: `wing` is a stored wing's name (a drawer's), held as it is
    (`Scope.holds`), not a name a client gave (`Scope.reaches`)."""
    if right not in scope.rights:
        raise refused(f"Your role or key does not allow {right}.")
    if scope.holds(wing) if stored else scope.reaches(wing):
        return scope
    if right == READ:
        raise NotFound("No wing with that name.", code="wing_not_found")
    raise out_of_scope(scope, f"This key does not reach wing {wing!r}.")


class ScopedAccess(permissions.IsAuthenticated):
    """Signed in, holding the route's right, within the wing named in the URL."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        if not super().has_permission(request, view):
            return False
        scope = scope_of(request)
        right = required_right(request)
        if right not in scope.rights:
            raise refused(f"Your role or key does not allow {right}.")
        route = request.resolver_match.url_name if request.resolver_match else ""
        if route in ALL_WING_ROUTES and scope.wings is not None:
            raise out_of_scope(scope, "This route spans every wing; the key reaches only some.")
        require(request, right, view.kwargs.get("wing"))
        return True


class CanDecide(ScopedAccess):
    """Reading is for every signed-in user; deciding needs the curators' permission. The refusal
    names what was refused: a view sets `decide_act` (e.g. "Starting a sweep") where its
    writes are not review decisions."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        if not super().has_permission(request, view):
            return False
        if request.method in permissions.SAFE_METHODS:
            return True
        act = getattr(view, "decide_act", "Deciding review items")
        # An agent key decides only as an agent granted the permission: a key the admin made
        # for a person's login, before it refused one, is refused at sign-in
        # (`api.authentication.KeyNotForAgent`).
        if request.user.has_perm(DECIDE_PERMISSION):
            return True
        raise refused(f"{act} needs the curators' decide permission.")


def agent_for(request: Request, agent: str | None) -> str:
    """The key's agent (or the person) writes as themselves unless allowed to write as another
    agent."""
    own = scope_of(request).agent
    # In the form a write gives it (`optional_written_name`): "scout\u200d" is scout's own.
    if not agent or agent == own or label_form(agent) == own:
        return own
    if not request.user.has_perm(WRITE_AS_ANY_AGENT):
        raise refused(f"Writing as agent {agent!r} needs the write_as_any_agent permission.")
    return agent
