"""Clusters of linked items through the API: read them like the queue, decide one at once (as
the pairs' decision endpoint does one item), and revert a decision batch as one."""

from __future__ import annotations

import uuid
from dataclasses import replace

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import errors
from api.permissions import CanDecide
from api.serializers.clusters import (
    ClusterDecisionRequestSerializer,
    ClusterDecisionSerializer,
    ClusterListSerializer,
    ClusterSerializer,
)
from api.serializers.review import DecisionSerializer, RevertRequestSerializer
from api.views.common import parsed, parsed_if_sent
from dedup.errors import InvalidInput, NotFound
from review import selectors, services
from review.forms import queue_filters
from review.services import Action, ClusterChoice, ItemRef

CLUSTER_ID = OpenApiParameter(
    "item_id", str, OpenApiParameter.PATH, description="Any open link of the cluster (d12, e7)."
)
CLUSTER_PARAMETERS = [
    OpenApiParameter("wing", str),
    OpenApiParameter("room", str),
    OpenApiParameter("kind", str, description="Entity kind, as a write takes it (else 400)."),
    OpenApiParameter("rule", str, enum=[*selectors.DRAWER_RULES, *selectors.ENTITY_RULES]),
    OpenApiParameter("min_similarity", float),
    OpenApiParameter("max_similarity", float),
    OpenApiParameter("q", str, description="Text in either side of a link."),
]


def _cluster(item_id: str) -> selectors.Cluster:
    ref = ItemRef.parse(item_id)
    cluster = selectors.cluster_of(ref)
    if cluster is None:
        raise NotFound(f"No open cluster holds {ref}.", code="item_not_found")
    return cluster


class ClusterListView(APIView):
    permission_classes = [CanDecide]

    @extend_schema(
        operation_id="review_clusters_list",
        parameters=CLUSTER_PARAMETERS,
        responses={200: ClusterListSerializer, **errors(401, 404)},
    )
    def get(self, request: Request) -> Response:
        """Clusters of the open links the filter selects (connected groups of three or more:
        drawers within a room, entities per kind), largest first, at most 50, each with at
        most 50 members."""
        filters = replace(queue_filters(request.query_params), type="cluster")
        return Response(ClusterListSerializer(selectors.cluster_page(filters)).data)


class ClusterDetailView(APIView):
    permission_classes = [CanDecide]

    @extend_schema(
        operation_id="review_cluster_retrieve",
        parameters=[CLUSTER_ID],
        responses={200: ClusterSerializer, **errors(401, 404)},
    )
    def get(self, request: Request, item_id: str) -> Response:
        """The cluster holding an open link: its members (oldest first) and its open links."""
        cluster = _cluster(item_id)
        selectors.load_cluster_members([cluster])
        return Response(ClusterSerializer(cluster).data)


class ClusterDecideView(APIView):
    permission_classes = [CanDecide]

    @extend_schema(
        parameters=[CLUSTER_ID],
        request=ClusterDecisionRequestSerializer,
        responses={201: ClusterDecisionSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request: Request, item_id: str) -> Response:
        """Decide a cluster at once: `merge` into `canonical`, mark `distinct`, leave the other
        members open; one audit row per link under one `batch`. `links` must be the cluster's
        open links as read, else 409 cluster_changed and nothing is written."""
        ref = ItemRef.parse(item_id)
        services.check_item_known(ref)
        data = parsed(ClusterDecisionRequestSerializer, request)
        shown = set()
        for raw in data["links"]:
            link = ItemRef.parse(raw)
            if link.kind is not ref.kind:
                raise InvalidInput(
                    "links must be links of the cluster's kind.", details={"field": "links"}
                )
            shown.add(link.pk)
        result = services.decide_cluster(
            cluster=ref,
            choice=ClusterChoice(
                canonical=str(data["canonical"]),
                merge=frozenset(str(u) for u in data["merge"]),
                distinct=frozenset(str(u) for u in data["distinct"]),
                shown_links=frozenset(shown),
                mode=Action(data["mode"]),
            ),
            actor=request.user,
            note=data.get("note", ""),
        )
        return Response(ClusterDecisionSerializer(result).data, status=status.HTTP_201_CREATED)


class BatchRevertView(APIView):
    permission_classes = [CanDecide]
    decide_act = "Reverting decisions"

    @extend_schema(
        parameters=[OpenApiParameter("batch_id", OpenApiTypes.UUID, OpenApiParameter.PATH)],
        request=RevertRequestSerializer,
        responses={
            200: OpenApiResponse(DecisionSerializer(many=True), description="The revert rows."),
            **errors(400, 401, 403, 404, 409),
        },
    )
    def post(self, request: Request, batch_id: uuid.UUID) -> Response:
        """Revert every decision of a batch (a cluster's decision, a bulk decision) as one. If
        later decisions depend on it, 409 revert_blocked names them; `cascade: true` reverts
        them together."""
        services.check_batch_known(batch_id)
        data = parsed_if_sent(RevertRequestSerializer, request)
        entries = services.revert_batch(
            batch=batch_id,
            actor=request.user,
            cascade=data.get("cascade", False),
            note=data.get("note", ""),
        )
        return Response(DecisionSerializer(entries, many=True).data)
