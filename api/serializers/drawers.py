"""Drawers, wings and the diary: request and response shapes."""

from __future__ import annotations

import uuid
from typing import Any, cast

from django.db import models
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers.common import (
    InputSerializer,
    JSONObjectField,
    StrictTextField,
    StrictUUIDField,
)
from api.serializers.limits import AgentField, KindField, LabelField, NameField
from palace import selectors
from palace.models import Drawer


class DrawerWriteSerializer(InputSerializer):
    given_labels = ("name", "kind", "agent")

    content = StrictTextField()
    name = NameField(required=False, allow_null=True)
    kind = KindField(required=False, allow_null=True)
    agent = AgentField(required=False, allow_null=True)
    source = JSONObjectField(  # type: ignore[assignment]  # a field named like Field.source
        required=False, allow_null=True
    )
    id = StrictUUIDField(
        required=False,
        help_text="Optional client-chosen id: writing it again with the same content is a "
        "replay (200, the drawer); with other content, 409 drawer_id_taken.",
    )


class DrawerListSerializer(serializers.ListSerializer):
    """Drawers, each with the drawer that stands for it (`DrawerSerializer.get_current`), found
    for the whole page in one query."""

    def to_representation(self, data: Any) -> list[Any]:
        drawers = _listed(data)
        cast(DrawerSerializer, self.child).standing = selectors.drawers_standing_for(drawers)
        return super().to_representation(drawers)


class HoldingDrawersListSerializer(serializers.ListSerializer):
    """Items each holding a drawer as `drawer` (mentions, search hits), nested whole: the
    drawers' `current`, found for the whole page in one query (a drawer serialised alone finds
    its own, `DrawerSerializer.get_current`)."""

    def to_representation(self, data: Any) -> list[Any]:
        items = _listed(data)
        nested = cast(DrawerSerializer, cast(serializers.Serializer, self.child).fields["drawer"])
        nested.standing = selectors.drawers_standing_for([item.drawer for item in items])
        return super().to_representation(items)


def _listed(data: Any) -> list[Any]:
    return list(data.all() if isinstance(data, models.Manager) else data)


class DrawerSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="uuid", read_only=True)
    wing = serializers.CharField(source="room.wing.name", read_only=True)
    room = serializers.CharField(source="room.name", read_only=True)
    superseded_by: serializers.SlugRelatedField[Drawer] = serializers.SlugRelatedField(
        slug_field="uuid", read_only=True, allow_null=True
    )
    is_current = serializers.BooleanField(read_only=True)
    current = serializers.SerializerMethodField(
        help_text="The current drawer that stands for this one: itself while current; else the "
        "end of its superseded_by chain (merged into a drawer merged away since, or superseded "
        "twice: the last); null if that ends in a drawer retired without a successor."
    )

    standing: dict[int, uuid.UUID] | None = None  # a list's, for all its drawers

    class Meta:
        model = Drawer
        list_serializer_class = DrawerListSerializer
        fields = [
            "id",
            "wing",
            "room",
            "content",
            "content_hash",
            "fingerprint",
            "name",
            "kind",
            "agent",
            "source",
            "valid_from",
            "valid_to",
            "superseded_by",
            "is_current",
            "current",
            "created_at",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.UUIDField(allow_null=True))
    def get_current(self, drawer: Drawer) -> str | None:
        if drawer.valid_to is None:
            return str(drawer.uuid)
        standing = self.standing
        if standing is None:  # one drawer, not a list's
            standing = selectors.drawers_standing_for([drawer])
        current = standing.get(drawer.pk)
        return str(current) if current is not None else None


class SimilarSerializer(serializers.Serializer):
    link = serializers.IntegerField(source="link.id")
    drawer = serializers.UUIDField(source="drawer.uuid")
    side = serializers.ChoiceField(choices=["older", "newer"])
    kind = serializers.CharField(source="link.verdict")
    similarity = serializers.FloatField(source="link.similarity")
    signals = serializers.JSONField(source="link.signals")
    created_at = serializers.DateTimeField(source="link.created_at")


class DrawerWrittenSerializer(DrawerSerializer):
    created = serializers.BooleanField(read_only=True)
    similar = SimilarSerializer(many=True, read_only=True)

    class Meta(DrawerSerializer.Meta):
        fields = [*DrawerSerializer.Meta.fields, "created", "similar"]
        read_only_fields = fields


class DuplicatesSerializer(serializers.Serializer):
    drawer = serializers.UUIDField()
    similar = SimilarSerializer(many=True)


class SupersedeSerializer(InputSerializer):
    by = StrictUUIDField(required=False, allow_null=True)


class DiaryWriteSerializer(InputSerializer):
    given_labels = ("agent", "kind")

    wing = LabelField()
    content = StrictTextField()
    agent = AgentField(required=False, allow_null=True)
    kind = KindField(required=False, allow_null=True)
    source = JSONObjectField(  # type: ignore[assignment]  # a field named like Field.source
        required=False, allow_null=True
    )


class RoomSummarySerializer(serializers.Serializer):
    name = serializers.CharField()
    drawer_count = serializers.IntegerField()


class WingSerializer(serializers.Serializer):
    name = serializers.CharField()
    rooms = RoomSummarySerializer(many=True, source="rooms.all")


class CheckedSimilarSerializer(serializers.Serializer):
    """A drawer of the room a write would be linked to, with the evidence."""

    drawer = serializers.UUIDField(source="candidate.uuid")
    kind = serializers.CharField(source="assessment.verdict")
    similarity = serializers.FloatField(source="assessment.signals.similarity")
    signals = serializers.JSONField(source="assessment.signals.as_dict")


class DrawerCheckSerializer(serializers.Serializer):
    """What a write would do, found without writing (`?dry_run=true`)."""

    would_store = serializers.BooleanField(
        help_text="True: a write would store a new drawer (linked to `similar`)."
    )
    existing = DrawerSerializer(
        allow_null=True,
        help_text="The drawer a write would return instead of storing (an exact copy, a "
        "replayed id, the same named drawer).",
    )
    similar = CheckedSimilarSerializer(many=True)
