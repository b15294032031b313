"""Checkpoints: a batch written all or nothing under a client-chosen id."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import errors
from api.models import WRITE
from api.permissions import agent_for, require
from api.serializers import checkpoints as cs
from api.views.common import parsed
from dedup import services


class CheckpointView(APIView):
    @extend_schema(
        request=cs.CheckpointSerializer,
        responses={
            201: cs.CheckpointResultSerializer,
            200: OpenApiResponse(cs.CheckpointResultSerializer, description="A replay."),
            **errors(400, 401, 403, 409),
        },
    )
    def post(self, request: Request) -> Response:
        """Write a batch of items under a client-chosen id, all or nothing."""
        data = parsed(cs.CheckpointSerializer, request)
        for wing in cs.checkpoint_wings(data["items"]):
            require(request, WRITE, wing)
        items = cs.checkpoint_items(
            data["items"], agent_of=lambda item: agent_for(request, item.get("agent"))
        )
        result, replayed = services.checkpoint_write(
            key=data["id"], items=items, actor=request.user
        )
        code = status.HTTP_200_OK if replayed else status.HTTP_201_CREATED
        return Response(
            cs.CheckpointResultSerializer({**result, "replayed": replayed}).data, status=code
        )
