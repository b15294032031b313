"""The diary: an agent's own entries, compared only with its own."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import errors
from api.models import WRITE
from api.permissions import agent_for, require
from api.serializers import drawers as s
from api.views.common import parsed
from api.views.drawers import written
from dedup import services


class DiaryView(APIView):
    @extend_schema(
        request=s.DiaryWriteSerializer,
        responses={
            201: s.DrawerWrittenSerializer,
            200: OpenApiResponse(s.DrawerWrittenSerializer, description="The same agent's copy."),
            **errors(400, 401, 403, 409),
        },
    )
    def post(self, request: Request) -> Response:
        """Write a diary entry, compared only with the same agent's entries."""
        data = parsed(s.DiaryWriteSerializer, request)
        require(request, WRITE, data["wing"])
        agent = agent_for(request, data.get("agent"))
        result = services.drawer_write_in(
            wing=data["wing"],
            room=services.DIARY_ROOM,
            content=data["content"],
            mode=services.WriteMode.DIARY,
            kind=data.get("kind") or "",
            agent=agent,
            source=data.get("source") or {"via": "api", "user": request.user.get_username()},
        )
        return written(result)
