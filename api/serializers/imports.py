"""Imports sent over the API, and their progress and result."""

from __future__ import annotations

from rest_framework import serializers

from api.serializers.common import InputSerializer, StrictCharField, StrictTextField
from api.serializers.limits import LabelField
from palace.models import Import

MAPPED_FIELDS = ("id", "content", "wing", "room", "name", "kind", "agent")


class ImportRequestSerializer(InputSerializer):
    format = serializers.ChoiceField(choices=Import.Format.values)
    data = StrictTextField(  # type: ignore[assignment]  # a field named like Serializer.data
        help_text="The file's text: JSONL, or mem0's JSON."
    )
    wing = LabelField(required=False, allow_null=True, help_text="File every record here.")
    mapping = serializers.DictField(
        child=StrictCharField(max_length=200),
        required=False,
        help_text='For `jsonl`: field to dotted path, e.g. {"content": "text"}.',
    )

    def validate_mapping(self, mapping: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(mapping) - set(MAPPED_FIELDS))
        if unknown:
            raise serializers.ValidationError(f"Unknown fields {unknown}; use {MAPPED_FIELDS}.")
        return mapping


class ImportErrorSerializer(serializers.Serializer):
    file = serializers.CharField()
    line = serializers.IntegerField()
    error = serializers.CharField()


class ImportSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    source = serializers.CharField()  # type: ignore[assignment]  # named like Field.source
    format = serializers.CharField()
    status = serializers.CharField()
    progress = serializers.IntegerField()
    summary = serializers.JSONField(
        help_text="{files, records, created, exact, similar, malformed}; after a reversal, "
        "`reversal`: {removed, links_removed, kept: [{drawer, reasons}], mentions_removed: "
        "[{drawer, entity, observation, provenance}]}."
    )
    malformed = ImportErrorSerializer(source="errors", many=True)
    drawers = serializers.SerializerMethodField(help_text="The drawers it created (ids).")
    links = serializers.SerializerMethodField(help_text="The links they made: [newer, older].")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_drawers(self, imported: Import) -> list[str]:
        return [str(u) for u in imported.drawers.order_by("id").values_list("uuid", flat=True)]

    def get_links(self, imported: Import) -> list[list[str]]:
        pairs = imported.links.order_by("id").values_list("newer__uuid", "older__uuid")
        return [[str(newer), str(older)] for newer, older in pairs]
