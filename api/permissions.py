"""Who may do what through the API."""

from __future__ import annotations

from rest_framework import permissions
from rest_framework.request import Request
from rest_framework.views import APIView

from api.errors import ApiError
from review.curators import DECIDE_PERMISSION

WRITE_AS_ANY_AGENT = "palace.write_as_any_agent"


class CanDecide(permissions.BasePermission):
    """Reading is for every signed-in user; deciding needs the curators' permission."""

    message = "Deciding review items needs the curators' decide permission."

    def has_permission(self, request: Request, view: APIView) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        return request.user.has_perm(DECIDE_PERMISSION)


def agent_for(request: Request, agent: str | None) -> str:
    """The authenticated user writes as themselves unless allowed to write as another agent."""
    own = request.user.get_username()
    if not agent or agent == own:
        return own
    if not request.user.has_perm(WRITE_AS_ANY_AGENT):
        raise ApiError(
            f"Writing as agent {agent!r} needs the write_as_any_agent permission.",
            code="permission_denied",
            status_code=403,
        )
    return agent
