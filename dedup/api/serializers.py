"""Request and response shapes. Inputs are strict about types (a number is not a string); the
rules about content (blank, NUL, size) live in `dedup.validation`, shared with every interface."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from dedup.services import Destination
from palace.models import Drawer, Entity
from palace.selectors import served_aliases


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


class JSONObjectField(serializers.JSONField):
    default_error_messages = {"not_object": "Must be a JSON object."}

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value is not None and not isinstance(value, dict):
            self.fail("not_object")
        return value


class DrawerWriteSerializer(serializers.Serializer):
    content = StrictTextField()
    name = StrictTextField(required=False, allow_null=True)
    kind = StrictTextField(required=False, allow_null=True)
    agent = StrictTextField(required=False, allow_null=True)
    source = JSONObjectField(required=False, allow_null=True)
    id = serializers.UUIDField(
        required=False, help_text="Optional client-chosen id: writing it again is a replay."
    )


class DrawerSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="uuid", read_only=True)
    wing = serializers.CharField(source="room.wing.name", read_only=True)
    room = serializers.CharField(source="room.name", read_only=True)
    superseded_by = serializers.SlugRelatedField(slug_field="uuid", read_only=True)
    is_current = serializers.BooleanField(read_only=True)

    class Meta:
        model = Drawer
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
            "created_at",
        ]
        read_only_fields = fields


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


class SupersedeSerializer(serializers.Serializer):
    by = serializers.UUIDField(required=False, allow_null=True)


class DiaryWriteSerializer(serializers.Serializer):
    wing = StrictTextField()
    content = StrictTextField()
    agent = StrictTextField(required=False, allow_null=True)
    kind = StrictTextField(required=False, allow_null=True)
    source = JSONObjectField(required=False, allow_null=True)


class CheckpointItemSerializer(serializers.Serializer):
    content = StrictTextField()
    destination = serializers.ChoiceField(choices=[d.value for d in Destination])
    wing = StrictTextField(required=False, allow_null=True)
    name = StrictTextField(required=False, allow_null=True)
    agent = StrictTextField(required=False, allow_null=True)
    kind = StrictTextField(required=False, allow_null=True)
    source = JSONObjectField(required=False, allow_null=True)


class CheckpointSerializer(serializers.Serializer):
    id = StrictTextField(help_text="Client-chosen; replaying it returns the same result.")
    items = CheckpointItemSerializer(many=True, allow_empty=False, max_length=1000)


class CheckpointDrawerSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    drawer = serializers.UUIDField()
    wing = serializers.CharField()
    room = serializers.CharField()
    created = serializers.BooleanField()
    similar = serializers.IntegerField()


class CheckpointResultSerializer(serializers.Serializer):
    id = serializers.CharField()
    items = serializers.IntegerField()
    stored = serializers.IntegerField()
    duplicates = serializers.IntegerField()
    similar = serializers.IntegerField()
    drawers = CheckpointDrawerSerializer(many=True)
    replayed = serializers.BooleanField()


class EntitySerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="uuid", read_only=True)
    aliases = serializers.SerializerMethodField()
    mention_count = serializers.IntegerField(read_only=True, default=None)
    redirect_to = serializers.SlugRelatedField(
        slug_field="uuid",
        read_only=True,
        help_text="Set when a curator settled this entity into another one (alias or merge).",
    )

    class Meta:
        model = Entity
        fields = [
            "id",
            "name",
            "kind",
            "key",
            "aliases",
            "mention_count",
            "redirect_to",
            "redirect_kind",
            "created_at",
        ]
        read_only_fields = fields

    def get_aliases(self, entity: Entity) -> list[str]:
        return served_aliases(entity)


class MentionWriteSerializer(serializers.Serializer):
    name = StrictTextField()
    kind = StrictTextField(required=False, allow_null=True)
    provenance = JSONObjectField(required=False, allow_null=True)


class ResolutionSerializer(serializers.Serializer):
    """How this sighting resolved (the stored observation is the first sighting's)."""

    rule = serializers.CharField()
    confidence = serializers.FloatField()


class MentionWrittenSerializer(serializers.Serializer):
    drawer = serializers.UUIDField(source="mention.drawer.uuid")
    entity = EntitySerializer(source="resolution.entity")
    created = serializers.BooleanField()
    entity_created = serializers.BooleanField(source="resolution.created")
    resolution = ResolutionSerializer()
    observation = serializers.JSONField(source="mention.observation")
    provenance = serializers.JSONField(source="mention.provenance")


class MentionSerializer(serializers.Serializer):
    drawer = DrawerSerializer()
    observation = serializers.JSONField()
    provenance = serializers.JSONField()
    created_at = serializers.DateTimeField()


class EntityCandidateSerializer(serializers.Serializer):
    link = serializers.IntegerField(source="link.id")
    entity = EntitySerializer()
    side = serializers.ChoiceField(choices=["older", "newer"])
    similarity = serializers.FloatField(source="link.similarity")
    created_at = serializers.DateTimeField(source="link.created_at")


class EntityCandidatesSerializer(serializers.Serializer):
    entity = serializers.UUIDField()
    candidates = EntityCandidateSerializer(many=True)


class AliasAddSerializer(serializers.Serializer):
    alias = StrictTextField()


class EntityAliasResultSerializer(EntitySerializer):
    added = serializers.BooleanField(read_only=True)

    class Meta(EntitySerializer.Meta):
        fields = [*EntitySerializer.Meta.fields, "added"]
        read_only_fields = fields


class RoomSummarySerializer(serializers.Serializer):
    name = serializers.CharField()
    drawer_count = serializers.IntegerField()


class WingSerializer(serializers.Serializer):
    name = serializers.CharField()
    rooms = RoomSummarySerializer(many=True, source="rooms.all")


class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField()
    code = serializers.CharField()
    details = serializers.JSONField(required=False)
