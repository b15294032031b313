"""The review console's API shapes: queue items (three kinds), decisions and statistics."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    PolymorphicProxySerializer,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers

from api.serializers.common import (
    InputSerializer,
    IsoDateTimeField,
    StrictBooleanField,
    StrictCharField,
)
from palace.models import DECISION_PREFIX, AuditEntry
from review import services
from review.items import MAX_NOTE, ItemKind, ItemRef
from review.selectors.queue import MAX_BULK, AtLeast

# --- requests ----------------------------------------------------------------------------------


class DecisionRequestSerializer(InputSerializer):
    action = serializers.ChoiceField(choices=[a.value for a in services.Action])
    canonical = StrictCharField(required=False, allow_null=True, allow_blank=True)
    note = StrictCharField(required=False, allow_blank=True, max_length=MAX_NOTE)
    also_dismiss = serializers.ListField(
        child=StrictCharField(max_length=40),
        required=False,
        max_length=MAX_BULK,
        help_text="With add_alias: other items to dismiss in the same batch, those of them the "
        "alias settles (an open pair of the other entity and a third that the kept one also has "
        "a pair with: the console lists them); any other is left as it is.",
    )


class RevertRequestSerializer(InputSerializer):
    cascade = StrictBooleanField(required=False, default=False)
    note = StrictCharField(required=False, allow_blank=True, max_length=MAX_NOTE)


# --- queue items -------------------------------------------------------------------------------


class DrawerSideSerializer(serializers.Serializer):
    id = serializers.UUIDField(source="uuid")
    content = serializers.CharField()
    wing = serializers.CharField(source="room.wing.name")
    room = serializers.CharField(source="room.name")
    agent = serializers.CharField()
    is_current = serializers.SerializerMethodField()
    created_at = IsoDateTimeField()

    def get_is_current(self, drawer) -> bool:
        return drawer.valid_to is None


class EntitySideSerializer(serializers.Serializer):
    id = serializers.UUIDField(source="uuid")
    name = serializers.CharField()
    kind = serializers.CharField()
    key = serializers.CharField()


class ProposalItemSerializer(serializers.Serializer):
    """A sweep's proposal in quarantine."""

    id = serializers.CharField()
    type = serializers.SerializerMethodField()
    run = serializers.IntegerField(source="link.run_id")
    status = serializers.CharField(source="link.status")
    verdict = serializers.CharField(source="link.verdict", help_text="Empty until judged.")
    similarity = serializers.FloatField(source="link.score")
    rule = serializers.CharField(source="link.tier")
    gates = serializers.JSONField(source="link.gates")
    texts = serializers.JSONField(source="link.texts")
    created_at = IsoDateTimeField(source="link.created_at")

    def get_type(self, item) -> str:
        return "proposal"


class DrawerLinkItemSerializer(serializers.Serializer):
    """A similar_to link between two drawers."""

    id = serializers.CharField()
    type = serializers.SerializerMethodField()
    status = serializers.CharField(source="link.status")
    similarity = serializers.FloatField(source="link.similarity")
    created_at = IsoDateTimeField(source="link.created_at")
    older = DrawerSideSerializer(source="link.older")
    newer = DrawerSideSerializer(source="link.newer")
    rule = serializers.CharField(source="link.verdict")
    signals = serializers.JSONField(source="link.signals")

    def get_type(self, item) -> str:
        return "similar_to"


class EntityLinkItemSerializer(serializers.Serializer):
    """A possibly_same_as link between two entities."""

    id = serializers.CharField()
    type = serializers.SerializerMethodField()
    status = serializers.CharField(source="link.status")
    similarity = serializers.FloatField(source="link.similarity")
    created_at = IsoDateTimeField(source="link.created_at")
    older = EntitySideSerializer(source="link.older")
    newer = EntitySideSerializer(source="link.newer")
    rule = serializers.SerializerMethodField()
    distance = serializers.IntegerField(source="link.distance")

    def get_type(self, item) -> str:
        return "possibly_same_as"

    def get_rule(self, item) -> str:
        return "typo candidate" if item.link.distance == 1 else "possible match"


QUEUE_ITEM_SERIALIZERS: dict[str, serializers.Serializer | type[serializers.Serializer]] = {
    "proposal": ProposalItemSerializer,
    "similar_to": DrawerLinkItemSerializer,
    "possibly_same_as": EntityLinkItemSerializer,
}

QueueItemSchema = PolymorphicProxySerializer(
    component_name="QueueItem",
    serializers=QUEUE_ITEM_SERIALIZERS,
    resource_type_field_name="type",
    many=False,
)


@extend_schema_field(QueueItemSchema)
class QueueItemField(serializers.Field):
    """One queue item, in the shape of its kind."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)
        # One serializer per kind, built once: a new one per item copied all its fields each
        # time, half of the API queue's time (bench/review_queue.py).
        self.proposal = ProposalItemSerializer()
        self.drawer_link = DrawerLinkItemSerializer()
        self.entity_link = EntityLinkItemSerializer()

    def to_representation(self, item) -> dict:
        if item.ref.is_proposal:
            return self.proposal.to_representation(item)
        if item.is_drawer:
            return self.drawer_link.to_representation(item)
        return self.entity_link.to_representation(item)


@extend_schema_serializer(deprecate_fields=["items"])
class QueueSerializer(serializers.Serializer):
    """A page of the queue. Its list is `results`, the key of every other list of the API (the
    paginated lists and the search); `items`, the same list, is kept for the clients written
    before and is deprecated. `next` is the next page's cursor itself (pass it as `cursor`),
    not a link as the paginated lists' `next` is."""

    results = serializers.ListField(child=QueueItemField(), source="items")
    items = serializers.ListField(
        child=QueueItemField(), help_text="Deprecated: the same list as `results`; read that."
    )
    next = serializers.CharField(source="next_cursor", allow_null=True)
    counts = serializers.DictField(child=serializers.IntegerField())
    counts_at_least = serializers.SerializerMethodField(
        help_text="The counts that are lower bounds (the cap reached, or a filter on the linked "
        "rows counted in a window), shown with a + in the console."
    )

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_counts_at_least(self, page) -> list[str]:
        return sorted(name for name, count in page.counts.items() if isinstance(count, AtLeast))

    @property
    def _readable_fields(self) -> list[serializers.Field]:
        """Every field but `items`, which `to_representation` fills with `results`' list."""
        return [field for field in super()._readable_fields if field.field_name != "items"]

    def to_representation(self, page) -> dict[str, Any]:
        """The items are shown once (the queue's costliest work), under both keys."""
        data = super().to_representation(page)
        data["items"] = data["results"]
        return data


# --- decisions ---------------------------------------------------------------------------------


class DecisionSerializer(serializers.Serializer):
    """An audited decision. `context["reverted"]`: the ids of the decisions reverted since."""

    id = serializers.IntegerField(source="pk")
    action = serializers.SerializerMethodField()
    actor = serializers.CharField(source="actor_label")
    created_at = IsoDateTimeField()
    item = serializers.SerializerMethodField()
    target_type = serializers.CharField()
    target_id = serializers.CharField()
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)
    note = serializers.SerializerMethodField()
    batch = serializers.UUIDField(allow_null=True)
    reverted = serializers.SerializerMethodField()
    # A revert's: what it could not restore, and the entity links it wrote (an undo of an alias
    # or a merge links the entity it makes current to the names it never saw), as items.
    not_restored = serializers.SerializerMethodField()
    linked = serializers.SerializerMethodField()

    def get_action(self, entry: AuditEntry) -> str:
        return entry.action.removeprefix(DECISION_PREFIX)

    def get_item(self, entry: AuditEntry) -> str:
        return entry.data.get("item") or entry.target_id

    def get_note(self, entry: AuditEntry) -> str:
        return entry.data.get("note", "")

    def get_reverted(self, entry: AuditEntry) -> bool:
        return entry.pk in self.context.get("reverted", ())

    @extend_schema_field(
        serializers.ListField(
            child=serializers.JSONField(),
            help_text="A decision's revert: what it could not restore, in words. A sweep's "
            "reverse (`sweep.reverse`): its merges undone in part, each `{proposal, decision, "
            "revert, not_restored}` (as `POST /api/sweeps/{id}/reverse` answers).",
        )
    )
    def get_not_restored(self, entry: AuditEntry) -> list[Any]:
        return list(entry.data.get("not_restored", []))

    def get_linked(self, entry: AuditEntry) -> list[str]:
        return [str(ItemRef(ItemKind.ENTITY, pk)) for pk in entry.data.get("linked", [])]


# --- statistics --------------------------------------------------------------------------------


class PrecisionRowSerializer(serializers.Serializer):
    tier = serializers.CharField()
    band = serializers.CharField()
    open = serializers.IntegerField()
    same = serializers.IntegerField()
    wrong = serializers.IntegerField()
    dismissed = serializers.IntegerField()
    decided = serializers.IntegerField()
    precision = serializers.FloatField(
        allow_null=True, help_text="Same / (same + wrong); null until one is judged."
    )


class QueueDaySerializer(serializers.Serializer):
    date = serializers.DateField()
    open = serializers.IntegerField(help_text="Open items at the end of that day.")


class StatsSerializer(serializers.Serializer):
    tiers = PrecisionRowSerializer(many=True)
    queue = QueueDaySerializer(many=True)
