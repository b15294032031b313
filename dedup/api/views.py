"""REST endpoints. Each view parses its input, calls one service or selector, and renders.

An id in the URL is checked before the body: a malformed one is a 400, an unknown one a 404.
"""

from __future__ import annotations

from types import SimpleNamespace

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dedup import services
from dedup.api import serializers as s
from dedup.api.errors import ApiError, not_found
from dedup.errors import InvalidInput
from palace import selectors
from palace.models import Drawer, Entity

ERRORS = {
    400: OpenApiResponse(s.ErrorSerializer, description="Invalid input; nothing was written."),
    401: OpenApiResponse(s.ErrorSerializer, description="Not authenticated."),
    403: OpenApiResponse(s.ErrorSerializer, description="Permission denied."),
    404: OpenApiResponse(s.ErrorSerializer, description="Unknown id."),
    409: OpenApiResponse(s.ErrorSerializer, description="Conflict; nothing was written."),
}
WRITE_AS_ANY_AGENT = "palace.write_as_any_agent"


def errors(*codes: int) -> dict:
    return {code: ERRORS[code] for code in codes}


class NewestFirst(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


class OldestFirst(NewestFirst):
    ordering = "id"


def drawer_or_404(drawer_id: str) -> Drawer:
    parsed = selectors.parse_uuid(drawer_id)
    if parsed is None:
        raise ApiError("Malformed drawer id.", code="invalid_id", status_code=400)
    drawer = selectors.drawer_by_uuid(parsed)
    if drawer is None:
        raise not_found("drawer")
    return drawer


def entity_or_404(entity_id: str) -> Entity:
    parsed = selectors.parse_uuid(entity_id)
    if parsed is None:
        raise ApiError("Malformed entity id.", code="invalid_id", status_code=400)
    entity = selectors.entity_by_uuid(parsed)
    if entity is None:
        raise not_found("entity")
    return entity


def parsed(serializer_class, request: Request) -> dict:
    if not isinstance(request.data, dict):
        raise InvalidInput("The body must be a JSON object.")
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def agent_for(request: Request, agent: str | None) -> str:
    """The authenticated user writes as themselves unless allowed to write as another agent."""
    own = request.user.get_username()
    if not agent or agent == own:
        return own
    if not request.user.has_perm(WRITE_AS_ANY_AGENT):
        raise ApiError(
            f"Writing as agent {agent!r} needs the write_as_any_agent permission.",
            code="permission_denied",
            status_code=403,
        )
    return agent


def written(result: services.DrawerWrite) -> Response:
    """The drawer as stored, with what it was linked to: one query for the drawer, one for the
    ids of all the drawers it resembles."""
    drawer = selectors.drawers_with_place().get(pk=result.drawer.pk)
    drawer.created = result.created
    older = Drawer.objects.only("uuid").in_bulk([link.older_id for link in result.links])
    drawer.similar = [
        selectors.SimilarDrawer(link, older[link.older_id], "older") for link in result.links
    ]
    code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
    return Response(s.DrawerWrittenSerializer(drawer).data, status=code)


class WingListView(APIView):
    @extend_schema(responses={200: s.WingSerializer(many=True), **errors(401)})
    def get(self, request: Request) -> Response:
        """Wings with their rooms and the number of current drawers in each."""
        return Response(s.WingSerializer(selectors.wings_with_rooms(), many=True).data)


class WingDetailView(APIView):
    @extend_schema(responses={200: s.WingSerializer, **errors(401, 404)})
    def get(self, request: Request, wing: str) -> Response:
        found = selectors.wings_with_rooms().filter(name=wing).first()
        if found is None:
            raise ApiError("No wing with that name.", code="wing_not_found", status_code=404)
        return Response(s.WingSerializer(found).data)


class RoomDrawersView(GenericAPIView):
    pagination_class = NewestFirst
    serializer_class = s.DrawerSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("all", bool, description="Include superseded drawers."),
        ],
        responses={200: s.DrawerSerializer(many=True), **errors(401, 404)},
    )
    def get(self, request: Request, wing: str, room: str) -> Response:
        """A room's drawers, newest first (current ones unless `all=true`)."""
        found = selectors.room_by_names(wing=wing, room=room)
        if found is None:
            raise ApiError("No room with that name.", code="room_not_found", status_code=404)
        include_superseded = request.query_params.get("all", "").lower() in {"1", "true", "yes"}
        page = self.paginate_queryset(
            selectors.room_drawers(found, include_superseded=include_superseded)
        )
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    @extend_schema(
        request=s.DrawerWriteSerializer,
        responses={
            201: OpenApiResponse(s.DrawerWrittenSerializer, description="Stored."),
            200: OpenApiResponse(
                s.DrawerWrittenSerializer,
                description="Already held: an exact copy (or the same named drawer or id).",
            ),
            **errors(400, 401, 409),
        },
    )
    def post(self, request: Request, wing: str, room: str) -> Response:
        """Write a memory. An exact copy in the room is not stored again: the existing drawer
        comes back with `created: false`. A variant is stored and linked (`similar`)."""
        data = parsed(s.DrawerWriteSerializer, request)
        result = services.drawer_write_in(
            wing=wing,
            room=room,
            content=data["content"],
            name=data.get("name"),
            kind=data.get("kind") or "",
            agent=data.get("agent") or request.user.get_username(),
            source=data.get("source") or {"via": "api", "user": request.user.get_username()},
            drawer_id=data.get("id"),
        )
        return written(result)


class DrawerDetailView(APIView):
    @extend_schema(responses={200: s.DrawerSerializer, **errors(400, 401, 404)})
    def get(self, request: Request, drawer_id: str) -> Response:
        """One drawer, superseded or not."""
        return Response(s.DrawerSerializer(drawer_or_404(drawer_id)).data)

    @extend_schema(responses={204: None, **errors(400, 401, 404)})
    def delete(self, request: Request, drawer_id: str) -> Response:
        """Delete a drawer with its links and mentions (audited)."""
        services.drawer_delete(drawer=drawer_or_404(drawer_id), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DrawerSupersedeView(APIView):
    @extend_schema(
        request=s.SupersedeSerializer,
        responses={200: s.DrawerSerializer, **errors(400, 401, 404, 409)},
    )
    def post(self, request: Request, drawer_id: str) -> Response:
        """End a drawer's validity, optionally naming its replacement (audited)."""
        drawer = drawer_or_404(drawer_id)
        data = parsed(s.SupersedeSerializer, request) if request.data else {}
        by = None
        if data.get("by"):
            by = selectors.drawer_by_uuid(data["by"])
            if by is None:
                raise ApiError(
                    "No drawer with the id given in `by`.",
                    code="drawer_not_found",
                    status_code=404,
                    details={"field": "by"},
                )
        services.drawer_supersede(drawer=drawer, by=by, actor=request.user)
        return Response(s.DrawerSerializer(selectors.drawer_by_uuid(drawer.uuid)).data)


class DrawerDuplicatesView(APIView):
    @extend_schema(responses={200: s.DuplicatesSerializer, **errors(400, 401, 404)})
    def get(self, request: Request, drawer_id: str) -> Response:
        """The drawer's similar_to links from both ends, closest first."""
        drawer = drawer_or_404(drawer_id)
        payload = SimpleNamespace(drawer=drawer.uuid, similar=selectors.drawer_similar(drawer))
        return Response(s.DuplicatesSerializer(payload).data)


class DrawerMentionsView(APIView):
    @extend_schema(
        request=s.MentionWriteSerializer,
        responses={
            201: OpenApiResponse(s.MentionWrittenSerializer, description="New mention."),
            200: OpenApiResponse(s.MentionWrittenSerializer, description="Already recorded."),
            **errors(400, 401, 404),
        },
    )
    def post(self, request: Request, drawer_id: str) -> Response:
        """Name an entity in a drawer. The name resolves to a known entity only on safe
        evidence; otherwise a new entity is made and linked to those it resembles."""
        drawer = drawer_or_404(drawer_id)
        data = parsed(s.MentionWriteSerializer, request)
        provenance = data.get("provenance") or {"via": "api", "user": request.user.get_username()}
        result = services.mention_add(
            drawer=drawer,
            name=data["name"],
            kind=data.get("kind") or "other",
            provenance=provenance,
        )
        entity = selectors.entity_by_uuid(result.resolution.entity.uuid)
        payload = SimpleNamespace(
            mention=result.mention,
            created=result.created,
            resolution=SimpleNamespace(
                entity=entity,
                created=result.resolution.created,
                rule=str(result.resolution.rule),
                confidence=result.resolution.confidence,
            ),
        )
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        return Response(s.MentionWrittenSerializer(payload).data, status=code)


class DiaryView(APIView):
    @extend_schema(
        request=s.DiaryWriteSerializer,
        responses={
            201: s.DrawerWrittenSerializer,
            200: OpenApiResponse(s.DrawerWrittenSerializer, description="The same agent's copy."),
            **errors(400, 401, 403),
        },
    )
    def post(self, request: Request) -> Response:
        """Write a diary entry, compared only with the same agent's entries."""
        data = parsed(s.DiaryWriteSerializer, request)
        agent = agent_for(request, data.get("agent"))
        result = services.drawer_write_in(
            wing=data["wing"],
            room="diary",
            content=data["content"],
            mode=services.WriteMode.DIARY,
            kind=data.get("kind") or "",
            agent=agent,
            source=data.get("source") or {"via": "api", "user": request.user.get_username()},
        )
        return written(result)


class CheckpointView(APIView):
    @extend_schema(
        request=s.CheckpointSerializer,
        responses={
            201: s.CheckpointResultSerializer,
            200: OpenApiResponse(s.CheckpointResultSerializer, description="A replay."),
            **errors(400, 401, 403, 409),
        },
    )
    def post(self, request: Request) -> Response:
        """Write a batch of items under a client-chosen id, all or nothing."""
        data = parsed(s.CheckpointSerializer, request)
        items = [
            services.CheckpointItem(
                content=item["content"],
                destination=services.Destination(item["destination"]),
                agent=agent_for(request, item.get("agent")),
                wing=item.get("wing"),
                name=item.get("name"),
                kind=item.get("kind") or "",
                source=item.get("source"),
            )
            for item in data["items"]
        ]
        result, replayed = services.checkpoint_write(
            key=data["id"], items=items, actor=request.user
        )
        code = status.HTTP_200_OK if replayed else status.HTTP_201_CREATED
        return Response({**result, "replayed": replayed}, status=code)


class EntityListView(GenericAPIView):
    pagination_class = OldestFirst
    serializer_class = s.EntitySerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("kind", str, description="Only entities of this kind."),
            OpenApiParameter("name", str, description="Name or alias contains this text."),
        ],
        responses={200: s.EntitySerializer(many=True), **errors(401)},
    )
    def get(self, request: Request) -> Response:
        queryset = selectors.entities_search(
            kind=request.query_params.get("kind"), name=request.query_params.get("name")
        )
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class EntityDetailView(APIView):
    @extend_schema(responses={200: s.EntitySerializer, **errors(400, 401, 404)})
    def get(self, request: Request, entity_id: str) -> Response:
        return Response(s.EntitySerializer(entity_or_404(entity_id)).data)


class EntityMentionsView(GenericAPIView):
    pagination_class = OldestFirst
    serializer_class = s.MentionSerializer

    @extend_schema(responses={200: s.MentionSerializer(many=True), **errors(400, 401, 404)})
    def get(self, request: Request, entity_id: str) -> Response:
        """The drawers that name the entity, each with the spelling it used and the rule."""
        entity = entity_or_404(entity_id)
        page = self.paginate_queryset(selectors.entity_mentions(entity))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class EntityCandidatesView(APIView):
    @extend_schema(responses={200: s.EntityCandidatesSerializer, **errors(400, 401, 404)})
    def get(self, request: Request, entity_id: str) -> Response:
        """The entity's possibly_same_as links from both ends, closest first."""
        entity = entity_or_404(entity_id)
        payload = SimpleNamespace(
            entity=entity.uuid, candidates=selectors.entity_candidates(entity)
        )
        return Response(s.EntityCandidatesSerializer(payload).data)


class EntityAliasesView(APIView):
    @extend_schema(
        request=s.AliasAddSerializer,
        responses={200: s.EntityAliasResultSerializer, **errors(400, 401, 404)},
    )
    def post(self, request: Request, entity_id: str) -> Response:
        """Record another spelling so later sightings converge (audited). An alias equal to the
        name or already recorded changes nothing."""
        entity = entity_or_404(entity_id)
        data = parsed(s.AliasAddSerializer, request)
        _, added = services.entity_alias_add(entity=entity, alias=data["alias"], actor=request.user)
        refreshed = selectors.entity_by_uuid(entity.uuid)
        refreshed.added = added
        return Response(s.EntityAliasResultSerializer(refreshed).data)
