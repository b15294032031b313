"""What every view shares: parsing a body, and finding the object a URL names.

An id in the URL is checked before the body: a malformed one is a 400, an unknown one a 404.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.http import QueryDict
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.request import Request

from api.errors import ApiError, not_found
from api.query import given_once
from api.scopes import Scope
from dedup.errors import InvalidInput
from palace import selectors
from palace.models import Drawer, Entity
from review.models import SweepRun

# The paths take any text so that a malformed id is answered 400 invalid_id, not 404; the schema
# says what a well-formed one is.
DRAWER_ID = OpenApiParameter("drawer_id", OpenApiTypes.UUID, OpenApiParameter.PATH)
ENTITY_ID = OpenApiParameter("entity_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


def parsed(serializer_class: type[serializers.Serializer], request: Request) -> dict:
    if not isinstance(request.data, dict):
        raise InvalidInput("The body must be a JSON object.")
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def parsed_if_sent(serializer_class: type[serializers.Serializer], request: Request) -> dict:
    """`parsed` for a body that may be left out: no body at all is no fields. (DRF reads a missing
    body as an empty form; a JSON body that is not an object, `null`, `[]`, `0` or `""` too, is
    refused, where a test of the body's truth had taken it for none.)"""
    if isinstance(request.data, QueryDict) and not request.data:
        return {}
    return parsed(serializer_class, request)


def body_checked(request: Request) -> None:
    """For a route that reads no body: one sent is still parsed, so a malformed one (broken
    JSON, NaN, a NUL) is refused as on every route, before anything is done; its fields are not
    read. (Such routes deleted, reversed and cancelled with `{"bogus": NaN` as their body.)"""
    _ = request.data


FLAG_VALUES = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def one_of(request: Request, name: str, choices: Iterable[str]) -> str:
    """A query parameter that must be one of `choices` if given ("" when absent)."""
    value = request.query_params.get(name, "")
    if value and value not in choices:
        raise InvalidInput(
            f"{name} must be one of {sorted(choices)}.", details={"field": name, "value": value}
        )
    return value


def query_flag(request: Request, name: str) -> bool:
    """A yes/no query parameter: absent is no; a value that is neither is refused (400), and so
    is the parameter given twice (`dry_run=true&dry_run=false` wrote, where a proxy or a client
    reading the first value believed nothing was)."""
    value = given_once(request.query_params, name)
    if value is None:
        return False
    flag = FLAG_VALUES.get(value.lower())
    if flag is None:
        raise InvalidInput(
            f"{name} must be true or false.", details={"field": name, "value": value}
        )
    return flag


def drawer_or_404(drawer_id: str, scope: Scope | None = None) -> Drawer:
    """The drawer, if it exists and (given a scope) its wing is reached."""
    parsed_id = selectors.parse_uuid(drawer_id)
    if parsed_id is None:
        raise ApiError("Malformed drawer id.", code="invalid_id", status_code=400)
    drawer = selectors.drawer_by_uuid(parsed_id)
    if drawer is None or (scope is not None and not scope.holds(drawer.room.wing.name)):
        raise not_found("drawer")
    return drawer


def replacement_or_404(by: uuid.UUID | None, scope: Scope) -> Drawer | None:
    """The drawer a supersession names in `by` (its replacement), within the caller's reach;
    None when none is named. REST and MCP alike."""
    if by is None:
        return None
    replacement = selectors.drawer_by_uuid(by)
    if replacement is None or not scope.holds(replacement.room.wing.name):
        raise ApiError(
            "No drawer with the id given in `by`.",
            code="drawer_not_found",
            status_code=404,
            details={"field": "by"},
        )
    return replacement


def entity_or_404(entity_id: str, scope: Scope | None = None) -> Entity:
    """The entity, if it exists and (given a scope) the scope is told of it (`visible_to`: a
    key of some wings, of an entity named in one of them), its mentions counted in the scope's
    wings (every wing without one). Another is not found, as if absent."""
    parsed_id = selectors.parse_uuid(entity_id)
    if parsed_id is None:
        raise ApiError("Malformed entity id.", code="invalid_id", status_code=400)
    entity = selectors.entity_by_uuid(parsed_id, scope.wings if scope is not None else None)
    if entity is None:
        raise not_found("entity")
    return entity


def sweep_or_404(run_id: int) -> SweepRun:
    run = SweepRun.objects.filter(pk=run_id).first()
    if run is None:
        raise not_found("sweep")
    return run
