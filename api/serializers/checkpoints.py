"""Checkpoints: a batch of items written under a client-chosen id."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from rest_framework import serializers

from api.serializers.common import (
    InputSerializer,
    JSONObjectField,
    StrictTextField,
    refuse_empty_labels,
)
from api.serializers.limits import AgentField, KindField, LabelField, NameField
from dedup.services import CheckpointItem, Destination


def checkpoint_wings(items: Iterable[dict[str, Any]]) -> set[str]:
    """The wings a validated checkpoint writes into (an item's own, or its destination's)."""
    return {item.get("wing") or Destination(item["destination"]).default_wing for item in items}


def checkpoint_items(
    items: Iterable[dict[str, Any]],
    *,
    agent_of: Callable[[dict[str, Any]], str],
) -> list[CheckpointItem]:
    """Validated checkpoint items as the write path takes them, for the API and MCP alike: as
    given (a route's default source is `checkpoint_write`'s `default_source`, not the item's)."""
    return [
        CheckpointItem(
            content=item["content"],
            destination=Destination(item["destination"]),
            agent=agent_of(item),
            wing=item.get("wing"),
            name=item.get("name"),
            kind=item.get("kind") or "",
            source=item.get("source") or None,  # {} is none, as it always was
        )
        for item in items
    ]


class CheckpointItemSerializer(InputSerializer):
    given_labels = ("wing", "name", "agent", "kind")

    content = StrictTextField()
    destination = serializers.ChoiceField(choices=[d.value for d in Destination])
    wing = LabelField(required=False, allow_null=True)
    name = NameField(required=False, allow_null=True)
    agent = AgentField(required=False, allow_null=True)
    kind = KindField(required=False, allow_null=True)
    source = JSONObjectField(  # type: ignore[assignment]  # a field named like Field.source
        required=False, allow_null=True
    )


class CheckpointSerializer(InputSerializer):
    id = NameField(help_text="Client-chosen; replaying it returns the same result.")
    # many=True makes a ListSerializer, which takes max_length; the stubs see the child's init.
    items = CheckpointItemSerializer(many=True, allow_empty=False, max_length=1000)  # type: ignore[call-arg]

    def to_internal_value(self, data: Any) -> Any:
        # An item's empty label named with the item, as the write path names its refusals.
        items = data.get("items") if isinstance(data, Mapping) else None
        for index, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, Mapping):
                names = CheckpointItemSerializer.given_labels
                refuse_empty_labels(item, names, item=index)
        return super().to_internal_value(data)


class CheckpointDrawerSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    drawer = serializers.UUIDField()
    wing = serializers.CharField()
    room = serializers.CharField()
    destination = serializers.ChoiceField(
        choices=[d.value for d in Destination],
        required=False,
        help_text="The item's destination (absent from a replay of a checkpoint stored before "
        "answers said it).",
    )
    created = serializers.BooleanField()
    similar = serializers.IntegerField()
    present = serializers.BooleanField(
        default=True,
        help_text="Whether the drawer is still stored: a replay says false for one deleted since "
        "(its first answer's `created` stays as it was).",
    )


class CheckpointResultSerializer(serializers.Serializer):
    id = serializers.CharField()
    items = serializers.IntegerField()
    stored = serializers.IntegerField()
    duplicates = serializers.IntegerField()
    similar = serializers.IntegerField()
    drawers = CheckpointDrawerSerializer(many=True)
    replayed = serializers.BooleanField()
