"""Entities: search, one entity, its mentions, candidates and aliases."""

from __future__ import annotations

from types import SimpleNamespace

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import errors
from api.pagination import OldestFirst
from api.scopes import scope_of
from api.serializers import entities as es
from api.views.common import ENTITY_ID, body_checked, entity_or_404, parsed
from dedup import services
from dedup.errors import InvalidInput
from dedup.validation import clean_kind
from palace import selectors


class EntityListView(GenericAPIView):
    pagination_class = OldestFirst
    serializer_class = es.EntitySerializer

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "kind",
                str,
                description="Only entities of this kind: a kind as a write takes it (a short "
                "lowercase word, read lowercased); another is 400.",
            ),
            OpenApiParameter("name", str, description="Name or alias contains this text."),
        ],
        responses={200: es.EntitySerializer(many=True), **errors(401, paginated=True)},
    )
    def get(self, request: Request) -> Response:
        queryset = selectors.entities_search(
            # A kind no write can store is refused, as a write refuses it: it matched nothing.
            kind=clean_kind(request.query_params.get("kind")) or None,
            name=request.query_params.get("name"),
            wings=scope_of(request).wings,
        )
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class EntityDetailView(APIView):
    @extend_schema(
        parameters=[ENTITY_ID], responses={200: es.EntitySerializer, **errors(400, 401, 404)}
    )
    def get(self, request: Request, entity_id: str) -> Response:
        return Response(es.EntitySerializer(entity_or_404(entity_id, scope_of(request))).data)


class EntityMentionsView(GenericAPIView):
    pagination_class = OldestFirst
    serializer_class = es.MentionSerializer

    @extend_schema(
        parameters=[ENTITY_ID],
        responses={200: es.MentionSerializer(many=True), **errors(401, paginated=True)},
    )
    def get(self, request: Request, entity_id: str) -> Response:
        """The drawers that name the entity, each with the spelling it used and the rule."""
        scope = scope_of(request)
        mentions = selectors.entity_mentions(entity_or_404(entity_id, scope), scope.wings)
        page = self.paginate_queryset(mentions)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class EntityCandidatesView(APIView):
    @extend_schema(
        parameters=[ENTITY_ID],
        responses={200: es.EntityCandidatesSerializer, **errors(400, 401, 404)},
    )
    def get(self, request: Request, entity_id: str) -> Response:
        """The entity's possibly_same_as links from both ends, closest first."""
        scope = scope_of(request)
        entity = entity_or_404(entity_id, scope)
        candidates = selectors.entity_candidates(entity, scope.wings)
        payload = SimpleNamespace(entity=entity.uuid, candidates=candidates)
        return Response(es.EntityCandidatesSerializer(payload).data)


class EntityAliasesView(APIView):
    @extend_schema(
        parameters=[ENTITY_ID],
        request=es.AliasAddSerializer,
        responses={200: es.EntityAliasResultSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request: Request, entity_id: str) -> Response:
        """Record another spelling so later sightings converge (audited). An alias equal to the
        name or already recorded changes nothing."""
        entity = entity_or_404(entity_id)
        data = parsed(es.AliasAddSerializer, request)
        _, added = services.entity_alias_add(entity=entity, alias=data["alias"], actor=request.user)
        refreshed = selectors.entity_by_uuid(entity.uuid)
        assert refreshed is not None  # just found, and an alias deletes nothing
        refreshed.added = added  # type: ignore[attr-defined]  # read by the serializer
        return Response(es.EntityAliasResultSerializer(refreshed).data)

    @extend_schema(
        parameters=[
            ENTITY_ID,
            OpenApiParameter("alias", str, required=True, description="The alias to take back."),
        ],
        responses={200: es.EntityAliasRemovedSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def delete(self, request: Request, entity_id: str) -> Response:
        """Take back an alias recorded through the API (audited): later sightings no longer
        converge by it. An alias the entity does not hold changes nothing (`removed` false); a
        curator's is taken back by reverting its decision (409 alias_not_removable)."""
        body_checked(request)
        entity = entity_or_404(entity_id)
        alias = request.query_params.get("alias")
        if alias is None:
            raise InvalidInput("alias is required.", details={"field": "alias"})
        _, removed = services.entity_alias_remove(entity=entity, alias=alias, actor=request.user)
        refreshed = selectors.entity_by_uuid(entity.uuid)
        assert refreshed is not None  # just found, and taking an alias back deletes no entity
        refreshed.removed = removed  # type: ignore[attr-defined]  # read by the serializer
        return Response(es.EntityAliasRemovedSerializer(refreshed).data)
