"""Wings and their rooms, as a key sees them: the wings it reaches, those it may write into
but holding nothing yet too (a key made for a wing of its own sees that wing at once)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import ApiError, errors
from api.scopes import Scope, scope_of
from api.serializers import drawers as s
from dedup.validation import lookup_form
from palace import selectors
from palace.models import Room


def reached_wings(scope: Scope) -> list[Any]:
    """The wings the scope reaches, with their rooms, by name: a key's own wings that no write
    has made yet among them, with no room."""
    wings: list[Any] = list(selectors.wings_with_rooms().filter(scope.wing_filter("name")))
    stored = {wing.name for wing in wings}
    wings += [unmade_wing(name) for name in scope.wings or () if name not in stored]
    return sorted(wings, key=lambda wing: wing.name)


def reached_wing(scope: Scope, name: str) -> Any:
    """One wing, with its rooms: one the key names but no write has made yet has none; a wing
    neither stored nor the key's own is not found."""
    name = lookup_form(name)  # as every read finds a wing
    found = selectors.wings_with_rooms().filter(name=name).first()
    if found is None and scope.wings is not None and name in scope.wings:
        return unmade_wing(name)
    if found is None:
        raise ApiError("No wing with that name.", code="wing_not_found", status_code=404)
    return found


def unmade_wing(name: str) -> SimpleNamespace:
    """A key's wing that holds nothing yet (the first write into it makes it)."""
    return SimpleNamespace(name=name, rooms=Room.objects.none())


class WingListView(APIView):
    @extend_schema(responses={200: s.WingSerializer(many=True), **errors(401)})
    def get(self, request: Request) -> Response:
        """Wings with their rooms and the number of current drawers in each: those the key
        reaches, a key's own wing that holds nothing yet included (with no room)."""
        return Response(s.WingSerializer(reached_wings(scope_of(request)), many=True).data)


class WingDetailView(APIView):
    @extend_schema(responses={200: s.WingSerializer, **errors(401, 404)})
    def get(self, request: Request, wing: str) -> Response:
        return Response(s.WingSerializer(reached_wing(scope_of(request), wing)).data)
