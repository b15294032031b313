"""Imports as background tasks, their reversal, and the streamed export."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import ApiError, errors, not_found
from api.models import DELETE, READ, WRITE
from api.pagination import OldestFirst
from api.permissions import WRITE_AS_ANY_AGENT, agent_for, out_of_scope, require
from api.scopes import Scope, scope_of
from api.serializers import imports as s
from api.serializers.drawers import DrawerSerializer
from api.views.common import body_checked, parsed
from dedup import imports
from dedup.tasks import run_import
from dedup.validation import lookup_form
from palace import selectors
from palace.models import Import

EXPORT_FORMATS = {"jsonl": "castellan", "castellan": "castellan", "mempalace": "mempalace"}


def import_or_404(request: Request, import_id: int) -> Import:
    """The import, if it exists and the key reaches it (`reaches_import`)."""
    imported = Import.objects.filter(pk=import_id).first()
    if imported is None or not reaches_import(scope_of(request), imported):
        raise not_found("import")
    return imported


def reaches_import(scope: Scope, imported: Import) -> bool:
    """One rule for every import, made over the API or by `import_memories`: each records, when
    it is created (queued, before it writes anything), the wings its records name; a key sees it
    when it reaches every one of them. One that names no wing (a file of entities or mentions
    only, or an import made before commands recorded their wings) may have touched any wing:
    only a key of every wing sees it."""
    wings = imported.options.get("wings") or []
    if scope.wings is None:
        return True
    return bool(wings) and all(map(scope.reaches, wings))


class ImportListView(APIView):
    @extend_schema(
        request=s.ImportRequestSerializer,
        responses={
            202: OpenApiResponse(s.ImportSerializer, description="Queued; poll its id."),
            **errors(400, 401, 403),
        },
    )
    def post(self, request: Request) -> Response:
        """Import a file's records in the background, each through the write path. The key
        must be allowed to write to every wing the records name. Records are written as the
        key's agent, unless it may write as any agent (then as the agent a record names, if
        any); the agent a record names is kept in its drawer's `source`."""
        data = parsed(s.ImportRequestSerializer, request)
        mapping = data.get("mapping") or {}
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "upload"
            path.write_text(data["data"], encoding="utf-8")
            wings = imports.record_wings(
                path, format=data["format"], wing=data.get("wing"), mapping=mapping
            )
        for wing in sorted(wings):
            require(request, WRITE, wing)
        if not wings and scope_of(request).wings is not None:
            raise out_of_scope(scope_of(request), "The import names no wing this key reaches.")
        imported = imports.import_create(
            source="upload",
            format=data["format"],
            wing=data.get("wing"),
            mapping=mapping,
            actor=request.user,
            upload=data["data"],
            wings=wings,
            agent=agent_for(request, None),
            agent_only=not request.user.has_perm(WRITE_AS_ANY_AGENT),
            aliases=scope_of(request).wings is None,
        )
        run_import.enqueue(imported.pk)
        imported.refresh_from_db()
        return Response(s.ImportSerializer(imported).data, status=status.HTTP_202_ACCEPTED)


class ImportDetailView(APIView):
    @extend_schema(responses={200: s.ImportSerializer, **errors(401, 404)})
    def get(self, request: Request, import_id: int) -> Response:
        """An import's progress, summary, malformed records, and what it created and linked."""
        return Response(s.ImportSerializer(import_or_404(request, import_id)).data)


class ByDrawer(OldestFirst):
    ordering = "drawer_id"  # the join table's column (`selectors.import_drawers`)


class ByLink(OldestFirst):
    ordering = "drawerlink_id"


class ImportDrawersView(GenericAPIView):
    pagination_class = ByDrawer
    serializer_class = DrawerSerializer

    @extend_schema(responses={200: DrawerSerializer(many=True), **errors(401, 404, paginated=True)})
    def get(self, request: Request, import_id: int) -> Response:
        """Every drawer the import created, oldest first (the import's answer lists the first
        100)."""
        imported = import_or_404(request, import_id)
        page = self.paginate_queryset(selectors.import_drawers(imported)) or []
        drawers = selectors.drawers_in_order([row.drawer_id for row in page])
        return self.get_paginated_response(self.get_serializer(drawers, many=True).data)


class ImportLinksView(GenericAPIView):
    pagination_class = ByLink
    serializer_class = s.ImportLinkSerializer

    @extend_schema(
        responses={200: s.ImportLinkSerializer(many=True), **errors(401, 404, paginated=True)}
    )
    def get(self, request: Request, import_id: int) -> Response:
        """Every link the import's drawers made, oldest first (the import's answer lists the
        first 100)."""
        imported = import_or_404(request, import_id)
        page = self.paginate_queryset(selectors.import_links(imported)) or []
        links = selectors.links_in_order([row.drawerlink_id for row in page])
        return self.get_paginated_response(self.get_serializer(links, many=True).data)


class ImportReverseView(APIView):
    @extend_schema(request=None, responses={200: s.ImportSerializer, **errors(401, 403, 404, 409)})
    def post(self, request: Request, import_id: int) -> Response:
        """Remove what the import created and linked; drawers built on since are kept and
        listed in `summary.reversal.kept` with the reasons; the rooms and wings it created and
        left empty go too (`rooms_removed`, `wings_removed`). An import still queued or running
        stops, writing nothing more; a failed one loses what it stored before it failed."""
        body_checked(request)
        imported = import_or_404(request, import_id)
        for wing in imported.options.get("wings", []):
            require(request, DELETE, wing)
        imports.import_reverse(imported=imported, actor=request.user)
        imported.refresh_from_db()
        return Response(s.ImportSerializer(imported).data)


class ExportView(APIView):
    def perform_content_negotiation(
        self, request: Request, force: bool = False
    ) -> tuple[BaseRenderer, str]:
        """`format` names the export's format here, not DRF's renderer (the answer is JSON
        lines, and an error the API's JSON)."""
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        parameters=[
            OpenApiParameter("wing", OpenApiTypes.STR, required=False),
            OpenApiParameter("format", OpenApiTypes.STR, enum=sorted(EXPORT_FORMATS)),
        ],
        responses={
            (200, "application/x-ndjson"): OpenApiTypes.STR,
            **errors(400, 401, 403, 404),
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        """Stream the store (or a wing) as JSON lines, read a chunk at a time."""
        given = request.query_params.get("wing")
        wing = lookup_form(given) if given else None  # as every read finds a wing
        format = request.query_params.get("format", "jsonl")
        if format not in EXPORT_FORMATS:
            raise ApiError(
                f"format must be one of {sorted(EXPORT_FORMATS)}.", code="invalid", status_code=400
            )
        require(request, READ, wing)
        if wing is None and scope_of(request).wings is not None:
            raise out_of_scope(
                scope_of(request), "Exporting every wing needs a key that reaches every wing."
            )
        if wing is not None and not selectors.wing_exists(wing):  # as `export_memories` says
            raise ApiError("No wing with that name.", code="wing_not_found", status_code=404)
        lines = imports.export_lines(wing=wing, format=EXPORT_FORMATS[format])
        return StreamingHttpResponse(lines, content_type="application/x-ndjson")
