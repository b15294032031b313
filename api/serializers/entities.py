"""Entities, their mentions, candidates and aliases: request and response shapes."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers.common import InputSerializer, JSONObjectField
from api.serializers.drawers import DrawerSerializer, HoldingDrawersListSerializer
from api.serializers.limits import KindField, NameField
from palace.models import Entity
from palace.selectors import served_aliases


class EntitySerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="uuid", read_only=True)
    aliases = serializers.SerializerMethodField()
    mention_count = serializers.IntegerField(read_only=True, default=None)
    redirect_to = serializers.SerializerMethodField(
        help_text="Set when a curator settled this entity into another one (alias or merge); "
        "null too, to a key of some wings, where that one is not an entity it is told of (no "
        "drawer of its wings names it)."
    )

    created_at = serializers.DateTimeField(
        source="created_seen",
        read_only=True,
        allow_null=True,
        help_text="When the palace first recorded the entity; null to a key of some wings (it "
        "may be another wing's fact: the mentions in its wings have their own times).",
    )

    redirect_kind = serializers.ChoiceField(
        choices=Entity.Redirect.choices,
        allow_blank=True,
        read_only=True,
        help_text="Empty unless the entity was settled into another one.",
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

    @extend_schema_field(serializers.UUIDField(allow_null=True))
    def get_redirect_to(self, entity: Entity) -> str | None:
        """The entity it answers through, if the reader is told of it (`entities_with_aliases`
        reads that for a key of some wings)."""
        if entity.redirect_to is None or not getattr(entity, "redirect_seen", True):
            return None
        return str(entity.redirect_to.uuid)


class MentionWriteSerializer(InputSerializer):
    given_labels = ("kind",)

    name = NameField()
    kind = KindField(required=False, allow_null=True)
    provenance = JSONObjectField(required=False, allow_null=True)


class ResolutionSerializer(serializers.Serializer):
    """How this sighting resolved (the stored observation is the first sighting's)."""

    name = serializers.CharField(help_text="The name this sighting gave (trimmed).")
    rule = serializers.CharField()
    confidence = serializers.FloatField()


class PossiblySameSerializer(serializers.Serializer):
    """An entity a new entity was linked to `possibly_same_as`, for a curator to settle."""

    entity = serializers.UUIDField(source="older.uuid")
    name = serializers.CharField(source="older.name")
    kind = serializers.CharField(source="older.kind")
    similarity = serializers.FloatField()


class MentionWrittenSerializer(serializers.Serializer):
    drawer = serializers.UUIDField(source="mention.drawer.uuid")
    entity = EntitySerializer(source="resolution.entity")
    created = serializers.BooleanField(
        help_text="False: this drawer already mentioned the entity; `observation` is that "
        "first sighting's and nothing else was recorded for the drawer (`note` says so)."
    )
    entity_created = serializers.BooleanField(source="resolution.created")
    resolution = ResolutionSerializer()
    possibly_same_as = PossiblySameSerializer(
        many=True,
        source="resolution.possible",
        help_text="A new entity's links to the known entities it resembles but was not taken "
        "for (nothing merged): a curator settles them in the review queue.",
    )
    observation = serializers.JSONField(
        source="mention.observation",
        help_text="The stored mention's observation: the first sighting of the entity in this "
        "drawer (an earlier spelling, when `created` is false).",
    )
    provenance = serializers.JSONField(source="mention.provenance")
    note = serializers.CharField(help_text="What happened, in a sentence.")


class MentionSerializer(serializers.Serializer):
    drawer = DrawerSerializer()
    observation = serializers.JSONField()
    provenance = serializers.JSONField()
    created_at = serializers.DateTimeField()

    class Meta:
        list_serializer_class = HoldingDrawersListSerializer


class EntityCandidateSerializer(serializers.Serializer):
    link = serializers.IntegerField(source="link.id")
    entity = EntitySerializer()
    side = serializers.ChoiceField(choices=["older", "newer"])
    similarity = serializers.FloatField(source="link.similarity")
    created_at = serializers.DateTimeField(source="link.created_at")


class EntityCandidatesSerializer(serializers.Serializer):
    entity = serializers.UUIDField()
    candidates = EntityCandidateSerializer(many=True)


class AliasAddSerializer(InputSerializer):
    alias = NameField()


class EntityAliasResultSerializer(EntitySerializer):
    added = serializers.BooleanField(read_only=True)

    class Meta(EntitySerializer.Meta):
        fields = [*EntitySerializer.Meta.fields, "added"]
        read_only_fields = fields


class EntityAliasRemovedSerializer(EntitySerializer):
    removed = serializers.BooleanField(read_only=True)

    class Meta(EntitySerializer.Meta):
        fields = [*EntitySerializer.Meta.fields, "removed"]
        read_only_fields = fields
