"""Decisions through the API: deciding an item, the audit log, reverting."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import errors
from api.pagination import NewestFirst
from api.permissions import CanDecide, ScopedAccess
from api.serializers.review import (
    DecisionRequestSerializer,
    DecisionSerializer,
    RevertRequestSerializer,
)
from api.views.common import parsed, parsed_if_sent
from review import selectors, services
from review.forms import audit_filters


class DecideView(APIView):
    permission_classes = [CanDecide]

    @extend_schema(
        request=DecisionRequestSerializer,
        responses={201: DecisionSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request: Request, item_id: str) -> Response:
        """Decide one item. A second decision on the same item is refused (409 already_decided,
        naming who decided it and when). With add_alias, `also_dismiss` dismisses in the same
        batch the other pairs the alias settles, as the console offers."""
        ref = services.ItemRef.parse(item_id)
        services.check_item_known(ref)
        data = parsed(DecisionRequestSerializer, request)
        entry = services.decide_settling(
            item=ref,
            action=data["action"],
            actor=request.user,
            also_dismiss=data.get("also_dismiss", []),
            canonical=data.get("canonical") or None,
            note=data.get("note", ""),
            evidence={"via": "api"},
        )
        return Response(DecisionSerializer(entry).data, status=status.HTTP_201_CREATED)


class DecisionListView(GenericAPIView):
    permission_classes = [ScopedAccess]
    pagination_class = NewestFirst
    serializer_class = DecisionSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter(n, str) for n in ("actor", "action", "item", "since", "until")
        ],
        responses={200: DecisionSerializer(many=True), **errors(401, paginated=True)},
    )
    def get(self, request: Request) -> Response:
        """The audit log, newest first, filterable by curator, action, item and date."""
        page = self.paginate_queryset(selectors.audit_entries(audit_filters(request.query_params)))
        assert page is not None  # the view has a paginator
        entries = list(selectors.without_deleted_content(page, request.user))
        context = {"reverted": selectors.reverted_ids(entries)}
        return self.get_paginated_response(
            DecisionSerializer(entries, many=True, context=context).data
        )


class RevertView(APIView):
    permission_classes = [CanDecide]
    decide_act = "Reverting decisions"

    @extend_schema(
        request=RevertRequestSerializer,
        responses={
            200: OpenApiResponse(DecisionSerializer(many=True), description="The revert rows."),
            **errors(400, 401, 403, 404, 409),
        },
    )
    def post(self, request: Request, decision_id: int) -> Response:
        """Revert a decision to the exact prior state. If later decisions depend on it, 409
        revert_blocked names them; `cascade: true` reverts them together."""
        services.check_decision_known(decision_id)
        data = parsed_if_sent(RevertRequestSerializer, request)
        entries = services.revert(
            decision=decision_id,
            actor=request.user,
            cascade=data.get("cascade", False),
            note=data.get("note", ""),
        )
        return Response(DecisionSerializer(entries, many=True).data)
