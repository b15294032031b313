"""Imports sent over the API, and their progress and result."""

from __future__ import annotations

from rest_framework import serializers

from api.serializers.common import InputSerializer, StrictCharField, StrictTextField
from api.serializers.limits import LabelField
from palace import selectors
from palace.models import Import

MAPPED_FIELDS = ("id", "content", "wing", "room", "name", "kind", "agent")
# An import's answer lists its first drawers and links, and counts them all: one of 100,000
# records would otherwise answer megabytes on every poll. The rest are paged at
# `/api/imports/{id}/drawers` and `/links`.
LISTED = 100


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
        '[{drawer, entity, observation, provenance}], rooms_removed: ["wing/room"], '
        "wings_removed (those it, or an import reversed before it, created and left empty), "
        "and each list's count (removed_count...)}: each list its first 100 (the audit log "
        "holds every one)."
    )
    malformed = ImportErrorSerializer(
        source="errors",
        many=True,
        help_text="The first 100 malformed records, in file order, each with its file, line and "
        "why; `summary.malformed` counts them all.",
    )
    drawers = serializers.SerializerMethodField(
        help_text=f"The first {LISTED} drawers it created (ids), oldest first; every one, paged, "
        "at `GET /api/imports/{id}/drawers`."
    )
    drawers_count = serializers.SerializerMethodField(
        help_text="How many drawers it created (with those handed over to it when an earlier "
        "import of the same records was reversed)."
    )
    links = serializers.SerializerMethodField(
        help_text=f"The first {LISTED} links they made: [newer, older]; every one, paged, at "
        "`GET /api/imports/{id}/links`."
    )
    links_count = serializers.SerializerMethodField(help_text="How many links they made.")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_drawers(self, imported: Import) -> list[str]:
        ids = imported.drawers.order_by("id").values_list("uuid", flat=True)[:LISTED]
        return [str(u) for u in ids]

    def get_drawers_count(self, imported: Import) -> int:
        # The join table alone: through the drawers, 32 ms for an import of 100,000, not 4.
        return selectors.import_drawers(imported).count()

    def get_links(self, imported: Import) -> list[list[str]]:
        pairs = imported.links.order_by("id").values_list("newer__uuid", "older__uuid")[:LISTED]
        return [[str(newer), str(older)] for newer, older in pairs]

    def get_links_count(self, imported: Import) -> int:
        return selectors.import_links(imported).count()


class ImportLinkSerializer(serializers.Serializer):
    """A link an import's drawer made, as a write's `similar` names it."""

    id = serializers.IntegerField(
        help_text="The link's id: its review item is `d{id}` (`/api/review/items/d{id}/...`)."
    )
    newer = serializers.UUIDField(source="newer.uuid")
    older = serializers.UUIDField(source="older.uuid")
    kind = serializers.CharField(source="verdict")
    similarity = serializers.FloatField()
    status = serializers.CharField()
