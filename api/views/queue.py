"""The review queue through the API: the same items, filters and order as the console's page."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import errors
from api.permissions import CanDecide
from api.serializers.review import QueueSerializer
from review import selectors
from review.forms import queue_filters

QUEUE_PARAMETERS = [
    OpenApiParameter("type", str, enum=["drawer", "entity"]),
    OpenApiParameter("rule", str, enum=[*selectors.DRAWER_RULES, *selectors.ENTITY_RULES]),
    OpenApiParameter("wing", str),
    OpenApiParameter("room", str),
    OpenApiParameter("kind", str, description="Entity kind."),
    OpenApiParameter("min_similarity", float),
    OpenApiParameter("max_similarity", float),
    OpenApiParameter("status", str, enum=list(selectors.STATUSES)),
    OpenApiParameter("q", str, description="Text in either side."),
    OpenApiParameter("order", str, enum=list(selectors.ORDERS)),
    OpenApiParameter("cursor", str),
]


class QueueView(APIView):
    permission_classes = [CanDecide]

    @extend_schema(
        parameters=QUEUE_PARAMETERS, responses={200: QueueSerializer, **errors(400, 401)}
    )
    def get(self, request: Request) -> Response:
        """Open similar_to and possibly_same_as links, filtered and ordered like the page."""
        filters = queue_filters(request.query_params)
        page = selectors.queue_page(filters, cursor=request.query_params.get("cursor"))
        page.counts = selectors.queue_counts(
            filters, request.user, cursor=request.query_params.get("cursor"), page=page
        )
        return Response(QueueSerializer(page).data)
