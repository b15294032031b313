"""Recall: full-text search over current drawers, within the wings the request reaches."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from api.errors import errors
from api.models import READ
from api.permissions import require
from api.scopes import scope_of
from api.serializers import search as s
from dedup.search import drawers_search


class SearchView(APIView):
    @extend_schema(
        parameters=[s.SearchQuerySerializer],
        responses={200: s.SearchPageSerializer, **errors(400, 401, 404)},
    )
    def get(self, request: Request) -> Response:
        """Current drawers holding the query's words, those holding the most of its word
        groups first, then the newest; a typo in one word still finds the drawer. Only the
        wings the key reaches are searched: a `wing` out of its reach is 404 `wing_not_found`,
        whether it exists or not (as the MCP search tool answers). `next` is the next page's
        URL."""
        query = s.SearchQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        require(request, READ, data.get("wing"))
        page = drawers_search(
            query=data["q"],
            wings=scope_of(request).wings,
            wing=data.get("wing"),
            room=data.get("room"),
            agent=data.get("agent"),
            limit=data["limit"],
            cursor=data.get("cursor"),
        )
        next_url = None
        if page.next_cursor is not None:
            next_url = replace_query_param(request.build_absolute_uri(), "cursor", page.next_cursor)
        return Response(
            s.SearchPageSerializer(
                {"groups": page.groups, "hits": page.hits, "next": next_url}
            ).data
        )
