"""Shapes every part of the API shares. Inputs are strict about types (a number is not a
string); the rules about content (blank, NUL, size) live in `dedup.validation`, shared with every
interface."""

from __future__ import annotations

import heapq
import re
from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.error_codes import ERROR_CODE_CHOICES
from dedup.errors import EmptyLabel
from palace import selectors


class InputSerializer(serializers.Serializer):
    """The base of every request body: a field it does not declare is refused by name, at any
    depth (a nested input serializer is one too), instead of being silently dropped.

    `given_labels` are its optional names (a drawer's name, a kind, an agent): one given must
    say something, so "" is `empty_label` as one of spaces is (the write path took "" for none
    and "  " for a mistake); an optional one is left out, or null, for none."""

    given_labels: tuple[str, ...] = ()

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            unknown = [str(name) for name in data.keys() - set(self.fields)]  # in C: fast
            if unknown:
                raise unknown_fields(unknown)
            refuse_empty_labels(data, self.given_labels)
        return super().to_internal_value(data)


UNKNOWN_FIELD = "Unknown field."
# A refusal names this many unknown fields, the first in code point order; the first's message
# counts the rest. Naming every one, a body of 1.5 million unknown keys took 18 s and 2 GB to
# refuse, in a 40 MB answer.
UNKNOWN_NAMED = 10


def unknown_fields(names: Collection[str]) -> serializers.ValidationError:
    """`invalid`, naming the fields a body (or a tool's arguments) does not declare."""
    named = heapq.nsmallest(UNKNOWN_NAMED, names)
    detail = {name: [UNKNOWN_FIELD] for name in named}
    if left := len(names) - len(named):
        detail[named[0]] = [f"Unknown field; {left:,} more unknown fields are not named."]
    return serializers.ValidationError(detail)


def refuse_empty_labels(data: Mapping[str, Any], names: tuple[str, ...], **details: Any) -> None:
    """`empty_label` for the first of `names` given as "" (`details`: where, e.g. an item)."""
    for name in names:
        if data.get(name) == "":
            raise EmptyLabel(f"{name} must not be blank.", details={"field": name, **details})


@extend_schema_field(OpenApiTypes.STR)
class StrictTextField(serializers.Field):
    """A string, taken as it is: no trimming and no coercion of numbers or booleans."""

    default_error_messages = {"invalid": "Must be a string."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return data

    def to_representation(self, value):
        return value


class StrictCharField(serializers.CharField):
    """DRF's CharField, without turning a number or a boolean into its text."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictUUIDField(serializers.UUIDField):
    """A UUID written as text, as the API writes ids (`selectors.parse_uuid`, which a path's id
    is read by): DRF's UUIDField takes an integer (and so `true`) as one, and braces, a
    `urn:uuid:` prefix or 32 bare digits, so a drawer written under `{...}` could not be read
    back by that spelling."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str) or selectors.parse_uuid(data) is None:
            self.fail("invalid", value=data)
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """`true` or `false`: DRF's BooleanField takes 0, 1, "yes" and "on" too."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


_WHOLE_NUMBER = re.compile("-?[0-9]+")


class QueryIntegerField(serializers.IntegerField):
    """A whole number: a JSON integer (the MCP tools' arguments), or a query string's ASCII
    digits. DRF's IntegerField takes what Python's `int` does, so a full-width digit, `1_0`,
    ` 5` and `5.0` passed as numbers."""

    def to_internal_value(self, data: Any) -> int:
        written = isinstance(data, str) and _WHOLE_NUMBER.fullmatch(data) is not None
        if not (written or (isinstance(data, int) and not isinstance(data, bool))):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictFloatField(serializers.FloatField):
    """A JSON number: DRF's FloatField takes a numeric string (and a boolean) too."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


class JSONObjectField(serializers.JSONField):
    default_error_messages = {"not_object": "Must be a JSON object."}

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value is not None and not isinstance(value, dict):
            self.fail("not_object")
        return value


class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField()
    code = serializers.ChoiceField(choices=ERROR_CODE_CHOICES, help_text="A stable code.")
    details = serializers.JSONField(required=False)


@extend_schema_field(OpenApiTypes.DATETIME)
class IsoDateTimeField(serializers.Field):
    """A moment as `datetime.isoformat()` writes it (`+00:00`, not DRF's `Z`): the review API's
    responses were written that way before they had serializers, and clients read them so."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value: datetime) -> str:
        return value.isoformat()
