"""The review queue through the API: the same items, filters and order as the console's page."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import errors
from api.permissions import CanDecide
from api.serializers.review import QueueSerializer
from dedup.errors import InvalidInput
from review import selectors
from review.forms import queue_filters

QUEUE_PARAMETERS = [
    OpenApiParameter("type", str, enum=["drawer", "entity"]),
    OpenApiParameter(
        "rule",
        str,
        enum=[*selectors.DRAWER_RULES, *selectors.ENTITY_RULES, *selectors.PROPOSAL_RULES],
    ),
    OpenApiParameter("wing", str),
    OpenApiParameter("room", str),
    OpenApiParameter("kind", str, description="Entity kind, as a write takes it (else 400)."),
    OpenApiParameter("min_similarity", float),
    OpenApiParameter("max_similarity", float),
    OpenApiParameter("status", str, enum=list(selectors.STATUSES)),
    OpenApiParameter("q", str, description="Text in either side."),
    OpenApiParameter("order", str, enum=list(selectors.ORDERS)),
    OpenApiParameter(
        "run",
        int,
        description="A sweep's number: its proposals instead of links (no type). Not a "
        "number (or 0): 400 `invalid_id`; no such sweep: 404 `sweep_not_found`.",
    ),
    OpenApiParameter("cursor", str),
]
# The console's grouping of the queue; the API has its own route for clusters.
CLUSTERS_ELSEWHERE = (
    "type cluster groups the console's queue: the API lists them at /api/review/clusters."
)


class QueueView(APIView):
    permission_classes = [CanDecide]

    @extend_schema(
        parameters=QUEUE_PARAMETERS, responses={200: QueueSerializer, **errors(400, 401, 404)}
    )
    def get(self, request: Request) -> Response:
        """Open similar_to and possibly_same_as links, filtered and ordered like the page; with
        `run`, that sweep's proposals instead."""
        filters = queue_filters(request.query_params)
        if filters.type == "cluster":
            raise InvalidInput(CLUSTERS_ELSEWHERE, details={"field": "type"})
        page = selectors.queue_page(filters, cursor=request.query_params.get("cursor"))
        page.counts = selectors.queue_counts(
            filters, request.user, cursor=request.query_params.get("cursor"), page=page
        )
        return Response(QueueSerializer(page).data)
