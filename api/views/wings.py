"""Wings and their rooms."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import ApiError, errors
from api.scopes import scope_of
from api.serializers import drawers as s
from dedup.validation import lookup_form
from palace import selectors


class WingListView(APIView):
    @extend_schema(responses={200: s.WingSerializer(many=True), **errors(401)})
    def get(self, request: Request) -> Response:
        """Wings with their rooms and the number of current drawers in each."""
        wings = selectors.wings_with_rooms().filter(scope_of(request).wing_filter("name"))
        return Response(s.WingSerializer(wings, many=True).data)


class WingDetailView(APIView):
    @extend_schema(responses={200: s.WingSerializer, **errors(401, 404)})
    def get(self, request: Request, wing: str) -> Response:
        found = selectors.wings_with_rooms().filter(name=lookup_form(wing)).first()
        if found is None:
            raise ApiError("No wing with that name.", code="wing_not_found", status_code=404)
        return Response(s.WingSerializer(found).data)
