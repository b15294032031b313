"""Clusters of linked items through the API: the list, one cluster, a decision on it, and a
batch revert."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from api.serializers.common import (
    InputSerializer,
    IsoDateTimeField,
    StrictCharField,
    StrictUUIDField,
)
from api.serializers.review import DecisionSerializer
from palace.models import Drawer
from review.items import MAX_NOTE
from review.services.clusters import ENTITY_MODES

MAX_IDS = 1000  # uuids or link ids in one request


class ClusterMemberSerializer(serializers.Serializer):
    """A drawer (`text` its content) or an entity (`text` its name)."""

    id = serializers.UUIDField(source="uuid")
    text = serializers.SerializerMethodField()
    created_at = IsoDateTimeField()

    def get_text(self, member: Any) -> str:
        return member.content if isinstance(member, Drawer) else member.name


class ClusterSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="The cluster's smallest open link, e.g. d12.")
    type = serializers.SerializerMethodField()
    scope = serializers.CharField(help_text="The room (wing/room) or the entity kind.")
    size = serializers.IntegerField(help_text="Every member, shown or not.")
    truncated = serializers.BooleanField(help_text="More members than shown (at most 50).")
    links = serializers.ListField(child=serializers.CharField(), source="link_refs")
    members = ClusterMemberSerializer(many=True)

    def get_type(self, cluster: Any) -> str:
        return "similar_to" if cluster.is_drawer else "possibly_same_as"


class ClusterListSerializer(serializers.Serializer):
    clusters = ClusterSerializer(many=True)
    total = serializers.IntegerField(help_text="Clusters matching the filter (largest first).")
    members = serializers.IntegerField(help_text="Their members.")


class ClusterDecisionRequestSerializer(InputSerializer):
    canonical = StrictUUIDField(help_text="The member that stays (current, or answered).")
    merge = serializers.ListField(
        child=StrictUUIDField(), required=False, default=list, max_length=MAX_IDS
    )
    distinct = serializers.ListField(
        child=StrictUUIDField(), required=False, default=list, max_length=MAX_IDS
    )
    links = serializers.ListField(
        child=StrictCharField(max_length=24),
        max_length=MAX_IDS,
        help_text="The cluster's open links as read (`links` of GET): the 409 guard.",
    )
    mode = serializers.ChoiceField(
        choices=[m.value for m in ENTITY_MODES], required=False, default="add_alias"
    )
    note = StrictCharField(required=False, allow_blank=True, max_length=MAX_NOTE)


class ClusterDecisionSerializer(serializers.Serializer):
    cluster = serializers.CharField()
    batch = serializers.UUIDField()
    merged = serializers.IntegerField()
    distinct = serializers.IntegerField()
    decisions = DecisionSerializer(many=True, source="decided")
