"""The detector's measured precision and the queue's size over time."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import errors
from api.permissions import ScopedAccess
from api.serializers.review import StatsSerializer
from review import selectors


class StatsView(APIView):
    permission_classes = [ScopedAccess]

    @extend_schema(
        responses={
            200: OpenApiResponse(
                StatsSerializer, description="Precision per tier and band, queue size per day."
            ),
            **errors(401),
        }
    )
    def get(self, request: Request) -> Response:
        return Response(StatsSerializer(selectors.precision_stats()).data)
