"""Drawers: a room's list and writes, one drawer, its supersession, duplicates and mentions."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import ApiError, errors
from api.pagination import NewestFirst
from api.permissions import agent_for
from api.scopes import Scope, scope_of
from api.serializers import drawers as s
from api.serializers import entities as es
from api.views.common import (
    DRAWER_ID,
    body_checked,
    drawer_or_404,
    parsed,
    parsed_if_sent,
    query_flag,
    replacement_or_404,
)
from dedup import services
from dedup.errors import Conflict
from dedup.validation import entity_form, lookup_form
from palace import selectors
from palace.models import Drawer, Entity, EntityLink


def written(result: services.DrawerWrite) -> Response:
    """The drawer as stored, with what it was linked to (201 when new, else 200)."""
    code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
    return Response(written_data(result), status=code)


def written_data(result: services.DrawerWrite) -> dict:
    """The drawer as stored, with what it was linked to: one query for the drawer, one for the
    ids of all the drawers it resembles."""
    drawer = selectors.drawers_with_place().filter(pk=result.drawer.pk).first()
    if drawer is None:  # the drawer holding it was deleted between the write's commit and now
        raise Conflict(
            "The drawer holding this memory was deleted meanwhile; write it again to store it.",
            code="drawer_deleted",
            details={"drawer": str(result.drawer.uuid)},
        )
    drawer.created = result.created  # type: ignore[attr-defined]  # read by the serializer
    older = Drawer.objects.only("uuid").in_bulk([link.older_id for link in result.links])
    drawer.similar = [  # type: ignore[attr-defined]  # read by the serializer
        selectors.SimilarDrawer(link, older[link.older_id], selectors.Side.OLDER)
        for link in result.links
    ]
    return s.DrawerWrittenSerializer(drawer).data


def checked(check: services.DrawerCheck) -> Response:
    return Response(check_data(check))


def check_data(check: services.DrawerCheck) -> dict:
    """What a write would do: the drawer it would return, or the drawers it would link to (the
    dry run's answer, REST's and MCP's check_duplicate's)."""
    existing = None
    if check.existing is not None:
        existing = selectors.drawers_with_place().filter(pk=check.existing.pk).first()
    payload = SimpleNamespace(
        would_store=check.would_store,
        existing=existing,
        similar=[
            SimpleNamespace(candidate=candidate, assessment=assessment)
            for candidate, assessment in check.similar
        ],
    )
    return s.DrawerCheckSerializer(payload).data


class RoomDrawersView(GenericAPIView):
    pagination_class = NewestFirst
    serializer_class = s.DrawerSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("all", bool, description="Include superseded drawers."),
        ],
        responses={200: s.DrawerSerializer(many=True), **errors(401, 404, paginated=True)},
    )
    def get(self, request: Request, wing: str, room: str) -> Response:
        """A room's drawers, newest first (current ones unless `all=true`)."""
        found = selectors.room_by_names(wing=lookup_form(wing), room=lookup_form(room))
        if found is None:
            raise ApiError("No room with that name.", code="room_not_found", status_code=404)
        include_superseded = query_flag(request, "all")
        page = self.paginate_queryset(
            selectors.room_drawers(found, include_superseded=include_superseded)
        )
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "dry_run",
                bool,
                description="`true`: answer what a write would do (`DrawerCheck`, 200) and "
                "write nothing, not even the wing or the room.",
            ),
        ],
        request=s.DrawerWriteSerializer,
        responses={
            201: OpenApiResponse(s.DrawerWrittenSerializer, description="Stored."),
            200: OpenApiResponse(
                PolymorphicProxySerializer(
                    "DrawerWriteOrCheck",
                    serializers=[s.DrawerWrittenSerializer, s.DrawerCheckSerializer],
                    resource_type_field_name=None,
                ),
                description="Already held: an exact copy (or the same named drawer or id); "
                "with `dry_run=true`, what a write would do (`DrawerCheck`).",
            ),
            **errors(400, 401, 404, 409),
        },
    )
    def post(self, request: Request, wing: str, room: str) -> Response:
        """Write a memory. An exact copy in the room is not stored again: the existing drawer
        comes back with `created: false`. A variant is stored and linked (`similar`). With
        `dry_run=true`, nothing is written: the answer says what a write would do."""
        dry_run = query_flag(request, "dry_run")
        data = parsed(s.DrawerWriteSerializer, request)
        write = {
            "wing": wing,
            "room": room,
            "content": data["content"],
            "name": data.get("name"),
            "kind": data.get("kind") or "",
            "agent": agent_for(request, data.get("agent")),
            "source": data.get("source") or {"via": "api", "user": request.user.get_username()},
            "drawer_id": data.get("id"),
        }
        if dry_run:
            return checked(services.drawer_check(**write))
        return written(services.drawer_write_in(**write))


class DrawerDetailView(APIView):
    @extend_schema(
        parameters=[DRAWER_ID], responses={200: s.DrawerSerializer, **errors(400, 401, 404)}
    )
    def get(self, request: Request, drawer_id: str) -> Response:
        """One drawer, superseded or not."""
        return Response(s.DrawerSerializer(drawer_or_404(drawer_id, scope_of(request))).data)

    @extend_schema(parameters=[DRAWER_ID], responses={204: None, **errors(400, 401, 404)})
    def delete(self, request: Request, drawer_id: str) -> Response:
        """Delete a drawer with its links and mentions (audited)."""
        body_checked(request)
        drawer = drawer_or_404(drawer_id, scope_of(request))
        services.drawer_delete(drawer=drawer, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DrawerSupersedeView(APIView):
    @extend_schema(
        parameters=[DRAWER_ID],
        request=s.SupersedeSerializer,
        responses={200: s.DrawerSerializer, **errors(400, 401, 404, 409)},
    )
    def post(self, request: Request, drawer_id: str) -> Response:
        """End a drawer's validity, optionally naming its replacement (audited): a drawer of
        its own wing (409 `supersede_across_wings` otherwise: a key of that wing would be shown
        an id it cannot read)."""
        drawer = drawer_or_404(drawer_id, scope_of(request))
        data = parsed_if_sent(s.SupersedeSerializer, request)
        by = replacement_or_404(data.get("by"), scope_of(request))
        services.drawer_supersede(drawer=drawer, by=by, actor=request.user)
        return Response(s.DrawerSerializer(selectors.drawer_by_uuid(drawer.uuid)).data)


class DrawerDuplicatesView(APIView):
    @extend_schema(
        parameters=[DRAWER_ID], responses={200: s.DuplicatesSerializer, **errors(400, 401, 404)}
    )
    def get(self, request: Request, drawer_id: str) -> Response:
        """The drawer's similar_to links from both ends, closest first."""
        drawer = drawer_or_404(drawer_id, scope_of(request))
        payload = SimpleNamespace(drawer=drawer.uuid, similar=selectors.drawer_similar(drawer))
        return Response(s.DuplicatesSerializer(payload).data)


class DrawerMentionsView(APIView):
    @extend_schema(
        parameters=[DRAWER_ID],
        request=es.MentionWriteSerializer,
        responses={
            201: OpenApiResponse(es.MentionWrittenSerializer, description="New mention."),
            200: OpenApiResponse(es.MentionWrittenSerializer, description="Already recorded."),
            **errors(400, 401, 404),
        },
    )
    def post(self, request: Request, drawer_id: str) -> Response:
        """Name an entity in a drawer. The name resolves to a known entity only on safe
        evidence; otherwise a new entity is made and linked to those it resembles. A spelling
        that converged joins the entity's aliases only for a key of every wing (an alias steers
        the entity's sightings in all of them); the mention keeps it as written."""
        scope = scope_of(request)
        drawer = drawer_or_404(drawer_id, scope)
        data = parsed(es.MentionWriteSerializer, request)
        provenance = data.get("provenance") or {"via": "api", "user": request.user.get_username()}
        result = services.mention_add(
            drawer=drawer,
            name=data["name"],
            kind=data.get("kind") or "other",
            provenance=provenance,
            record_alias=scope.wings is None,
        )
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        return Response(mention_data(result, data["name"], scope), status=code)


def mention_data(result: services.MentionWrite, name: str, scope: Scope) -> dict:
    """The mention as recorded, with the entity its name resolved to and why, as the scope is
    shown that entity (`entity_or_404`), the entities a new one was linked to possibly_same_as
    that the scope is told of, and a sentence saying what happened (REST and MCP alike). A key
    of some wings is told of the entity by this mention at least: unless its drawer was deleted
    meanwhile, and the mention with it."""
    resolution = result.resolution
    entity = selectors.entity_by_uuid(resolution.entity.uuid, scope.wings)
    if entity is None:
        raise Conflict(
            "The drawer was deleted meanwhile, and the mention with it.",
            code="drawer_deleted",
            details={"drawer": str(result.mention.drawer.uuid)},
        )
    possible = told_of(resolution.possible, scope)
    payload = SimpleNamespace(
        mention=result.mention,
        created=result.created,
        resolution=SimpleNamespace(
            entity=entity,
            created=resolution.created,
            name=name.strip(),
            rule=str(resolution.rule),
            confidence=resolution.confidence,
            possible=possible,
        ),
        note=mention_note(result, name.strip(), possible, aliases=scope.wings is None),
    )
    return es.MentionWrittenSerializer(payload).data


def told_of(links: Sequence[EntityLink], scope: Scope) -> list[EntityLink]:
    """The possibly_same_as links to entities the scope is told of (`visible_to`): a key of some
    wings learns nothing of an entity only other wings name by its new one resembling it."""
    if scope.wings is None or not links:
        return list(links)
    told = set(
        Entity.objects.filter(pk__in=[link.older_id for link in links])
        .visible_to(scope.wings)
        .values_list("pk", flat=True)
    )
    return [link for link in links if link.older_id in told]


def mention_note(
    result: services.MentionWrite, given: str, possible: Sequence[EntityLink], *, aliases: bool
) -> str:
    """What a mention's write did, plainly: a new entity (and what it resembles of `possible`,
    the links the caller is told of), or a known one reached by a rule (the spelling one of its
    aliases where the caller's `aliases` are recorded: a key of some wings records none), and
    whether this drawer's mention was new or recorded before (when the stored observation is an
    earlier sighting's, which a reader could take for this one's)."""
    resolution = result.resolution
    entity = resolution.entity
    if resolution.created:
        said = f"New entity {entity.name!r} ({entity.kind})"
        if possible:
            names = ", ".join(repr(link.older.name) for link in possible)
            said += f", linked possibly_same_as {names} for a curator to settle (not merged)"
        return f"{said}; this drawer's mention of it is recorded."
    said = f"{given!r} resolved to entity {entity.name!r} ({entity.kind})"
    said += f" by rule {resolution.rule}"
    if entity_form(given) != entity.name:  # as the alias is recorded
        said += " and is one of its aliases" if aliases else " (kept by the mention, not an alias)"
    if result.created:
        return f"{said}; this drawer's mention of it is recorded."
    first = result.mention.observation.get("name")
    return (
        f"This drawer already mentioned entity {entity.name!r} (first as {first!r}: "
        f"`observation` is that sighting's); {said}. No second mention was recorded."
    )
