"""The memory palace: wings, rooms, drawers, entities, their links, and the audit log.

Models are thin: fields, constraints and indexes. Writes go through `dedup.services`, reads
through `palace.selectors`. Every internal primary key is an integer sequence, so "oldest" is a
plain comparison; the public id of a drawer or an entity is a UUID.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn, TypeAlias

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.db import models
from django.db.models import Q
from django.utils import timezone

if TYPE_CHECKING:
    from django.contrib.auth.models import User

LABEL_MAX_LENGTH = 100

# Who acts: a curator (or an anonymous request) in the console and the API; None for a command or a
# migration.
Actor: TypeAlias = "User | AnonymousUser | None"


def acting_user(actor: Actor) -> User | None:
    """The user to store as the one who acted: none for a command or an anonymous request."""
    if actor is None or isinstance(actor, AnonymousUser) or not actor.is_authenticated:
        return None
    return actor


class Wing(models.Model):
    name = models.CharField(max_length=LABEL_MAX_LENGTH, unique=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Room(models.Model):
    wing = models.ForeignKey(Wing, on_delete=models.PROTECT, related_name="rooms")
    name = models.CharField(max_length=LABEL_MAX_LENGTH)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["wing__name", "name"]
        constraints = [
            models.UniqueConstraint(fields=["wing", "name"], name="room_unique_name_in_wing"),
        ]

    def __str__(self) -> str:
        return f"{self.wing.name}/{self.name}"


class DrawerQuerySet(models.QuerySet["Drawer"]):
    def current(self) -> DrawerQuerySet:
        return self.filter(valid_to__isnull=True)


class Drawer(models.Model):
    """One memory. `content` is verbatim and never rewritten; everything used to compare two
    drawers (hash, normalised text, fingerprint) is derived and stored beside it."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    room = models.ForeignKey(Room, on_delete=models.PROTECT, related_name="drawers")
    content = models.TextField()
    content_hash = models.CharField(max_length=64, help_text="SHA-256 of the UTF-8 bytes.")
    normalized_content = models.TextField(
        blank=True, help_text="The text as compared: NFC, casefolded, letters and digits."
    )
    fingerprint = models.CharField(
        max_length=64,
        null=True,
        blank=True,
        help_text="SHA-256 of the normalised text; empty when it has no letter or digit.",
    )
    name = models.CharField(max_length=200, null=True, blank=True)
    kind = models.CharField(max_length=32, blank=True, help_text="fact, event, preference, ...")
    agent = models.CharField(max_length=150, blank=True)
    source = models.JSONField(default=dict, blank=True)
    valid_from = models.DateTimeField(default=timezone.now)
    valid_to = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    consolidation = models.JSONField(
        default=dict,
        blank=True,
        help_text="On a canonical drawer: the drawers merged into it, their provenance, the "
        "earliest and latest time the fact was seen, and the count of restatements.",
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = DrawerQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["room", "name"],
                condition=Q(name__isnull=False, valid_to__isnull=True),
                name="drawer_unique_current_name_in_room",
            ),
        ]
        indexes = [
            models.Index(
                fields=["room", "content_hash"],
                condition=Q(valid_to__isnull=True),
                name="drawer_current_hash",
            ),
            models.Index(
                fields=["room", "fingerprint"],
                condition=Q(valid_to__isnull=True),
                name="drawer_current_fingerprint",
            ),
            models.Index(fields=["room", "-id"], name="drawer_room_newest"),
        ]
        permissions = [("write_as_any_agent", "Can write diary entries as another agent")]

    def __str__(self) -> str:
        preview = self.content[:60].replace("\n", " ")
        return f"{preview}…" if len(self.content) > 60 else preview

    @property
    def is_current(self) -> bool:
        return self.valid_to is None


class ReviewedLink(models.Model):
    """What the two link models share: how alike the sides are, and the curator's decision.

    `status` is declared by each link model, since the decisions differ (only entities take an
    alias); "open" is always the undecided state.
    """

    similarity = models.FloatField()
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    # Declared by each link model, with its own choices.
    Status: ClassVar[type[DrawerLink.Status | EntityLink.Status]]
    status: models.CharField[str, str]

    class Meta:
        abstract = True
        ordering = ["-similarity", "id"]

    def mark_decided(self, actor: Actor) -> None:
        """Stamp the decision on the link (the status is set by the decision itself)."""
        self.decided_at = timezone.now()
        self.decided_by = acting_user(actor)

    def reopen(self) -> None:
        self.status = self.Status.OPEN
        self.decided_at = None
        self.decided_by = None


class DrawerLink(ReviewedLink):
    """A `similar_to` link: the newer drawer resembles the older one, with the evidence."""

    class Verdict(models.TextChoices):
        EXACT = "exact"
        NORMALIZED = "normalized"
        NEAR = "near"

    class Status(models.TextChoices):
        OPEN = "open"
        DISMISSED = "dismissed"
        MERGED = "merged"

    newer = models.ForeignKey(Drawer, on_delete=models.CASCADE, related_name="links_to_older")
    older = models.ForeignKey(Drawer, on_delete=models.CASCADE, related_name="links_to_newer")
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    signals = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)

    class Meta(ReviewedLink.Meta):
        constraints = [
            models.UniqueConstraint(fields=["newer", "older"], name="drawer_link_unique_pair"),
            models.CheckConstraint(
                condition=~Q(newer=models.F("older")), name="drawer_link_not_to_itself"
            ),
        ]
        indexes = [
            models.Index(fields=["status", "-similarity", "-id"], name="drawer_link_queue"),
            models.Index(fields=["status", "-created_at", "-id"], name="drawer_link_queue_age"),
        ]
        permissions = [("decide", "Can decide review items (curator)")]
        verbose_name = "similar_to link"

    def __str__(self) -> str:
        return f"{self.newer_id} similar_to {self.older_id} ({self.verdict} {self.similarity:.3f})"


class Entity(models.Model):
    """A person, tool, project... named in drawers. `name` is the first spelling seen and is
    never rewritten; other spellings are aliases."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=32, default="other")

    class Redirect(models.TextChoices):
        ALIAS = "alias", "alias: later sightings go to the canonical entity"
        MERGE = "merge", "merge: mentions and aliases are served from the canonical entity"

    key = models.CharField(max_length=200, blank=True)
    key_length = models.PositiveIntegerField(default=0)
    redirect_to = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="redirected_from"
    )
    redirect_kind = models.CharField(max_length=8, choices=Redirect.choices, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "entities"
        constraints = [
            models.UniqueConstraint(fields=["name", "kind"], name="entity_unique_name_kind"),
        ]
        indexes = [
            models.Index(fields=["key"], name="entity_key"),
            models.Index(fields=["kind", "key_length"], name="entity_kind_key_length"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class EntityAlias(models.Model):
    """Another spelling of an entity, with its key (indexed) so later sightings converge.

    `source` says who recorded it. Only an alias a person recorded serves the typo rule: one a
    convergence recorded may itself have been a typo, and spellings would drift."""

    class Source(models.TextChoices):
        CONVERGENCE = "convergence", "a sighting that converged"
        API = "api", "a person, through the API"
        CURATOR = "curator", "a curator's add_alias decision"

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="alias_set")
    alias = models.CharField(max_length=200)
    key = models.CharField(max_length=200)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.CONVERGENCE)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["entity", "alias"], name="entity_alias_unique"),
        ]
        indexes = [models.Index(fields=["key"], name="entity_alias_key")]
        verbose_name_plural = "entity aliases"

    def __str__(self) -> str:
        return self.alias


# The sources of aliases a person recorded: they serve the typo rule.
PERSON_ALIAS_SOURCES = (EntityAlias.Source.API, EntityAlias.Source.CURATOR)


class Mention(models.Model):
    """A drawer names an entity. The observation keeps the name as the drawer spelled it, the
    rule that resolved it and the confidence; provenance says where the sighting came from."""

    drawer = models.ForeignKey(Drawer, on_delete=models.CASCADE, related_name="mentions")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="mentions")
    observation = models.JSONField(default=dict)
    provenance = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["drawer", "entity"], name="mention_unique_pair"),
        ]

    def __str__(self) -> str:
        return f"{self.drawer_id} mentions {self.entity_id}"


class EntityLink(ReviewedLink):
    """A `possibly_same_as` link: the newer entity resembles the older one."""

    class Status(models.TextChoices):
        OPEN = "open"
        DISMISSED = "dismissed"
        ALIASED = "aliased"
        MERGED = "merged"

    newer = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="links_to_older")
    older = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="links_to_newer")
    distance = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Edits between the keys: 1 is an ambiguous typo."
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)

    class Meta(ReviewedLink.Meta):
        constraints = [
            models.UniqueConstraint(fields=["newer", "older"], name="entity_link_unique_pair"),
            models.CheckConstraint(
                condition=~Q(newer=models.F("older")), name="entity_link_not_to_itself"
            ),
        ]
        indexes = [
            models.Index(fields=["status", "-similarity", "-id"], name="entity_link_queue"),
            models.Index(fields=["status", "-created_at", "-id"], name="entity_link_queue_age"),
        ]
        verbose_name = "possibly_same_as link"

    def __str__(self) -> str:
        return f"{self.newer_id} possibly_same_as {self.older_id} ({self.similarity:.3f})"


class DistinctPair(models.Model):
    """Two drawers or two entities a curator said are not the same: never linked again.

    The pair is held by the foreign keys of its kind (`low_drawer`/`high_drawer` or
    `low_entity`/`high_entity`, the smaller internal id first); the other kind's are empty. It
    goes with either of its rows: it exists to stop a link between the two, and a deleted row can
    be linked to nothing.
    """

    class Kind(models.TextChoices):
        DRAWER = "drawer"
        ENTITY = "entity"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    low_drawer = models.ForeignKey(
        Drawer, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    high_drawer = models.ForeignKey(
        Drawer, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    low_entity = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    high_entity = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["low_drawer", "high_drawer"], name="distinct_pair_unique_drawers"
            ),
            models.UniqueConstraint(
                fields=["low_entity", "high_entity"], name="distinct_pair_unique_entities"
            ),
            models.CheckConstraint(
                condition=Q(
                    kind="drawer",
                    low_drawer__lt=models.F("high_drawer"),
                    low_entity__isnull=True,
                    high_entity__isnull=True,
                )
                | Q(
                    kind="entity",
                    low_entity__lt=models.F("high_entity"),
                    low_drawer__isnull=True,
                    high_drawer__isnull=True,
                ),
                name="distinct_pair_ordered_of_its_kind",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.low} is not {self.high}"

    @property
    def low(self) -> int | None:
        """The smaller internal id of the pair."""
        return self.low_drawer_id if self.kind == self.Kind.DRAWER else self.low_entity_id

    @property
    def high(self) -> int | None:
        return self.high_drawer_id if self.kind == self.Kind.DRAWER else self.high_entity_id

    @classmethod
    def ordered(cls, a: int, b: int) -> tuple[int, int]:
        return (a, b) if a < b else (b, a)

    @classmethod
    def columns(cls, kind: str) -> tuple[str, str]:
        """The (low, high) foreign keys that hold a pair of this kind."""
        return (f"low_{kind}", f"high_{kind}")

    @classmethod
    def of(cls, kind: str, a: int, b: int) -> dict[str, Any]:
        """The lookup of the pair of `a` and `b`, in either order: for `filter` and
        `get_or_create`."""
        low, high = cls.ordered(a, b)
        low_column, high_column = cls.columns(cls.Kind(kind))
        return {"kind": kind, f"{low_column}_id": low, f"{high_column}_id": high}


class Checkpoint(models.Model):
    """A batch of items written under a client-chosen id; replaying the id replays the result."""

    key = models.CharField(max_length=200, unique=True)
    payload_hash = models.CharField(max_length=64)
    result = models.JSONField(default=dict)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return self.key


DECISION_PREFIX = "review."


class AuditAction(models.TextChoices):
    """Everything the audit log records, named once. Decisions on review items are `review.*`."""

    DRAWER_SUPERSEDE = "drawer.supersede"
    DRAWER_DELETE = "drawer.delete"
    ENTITY_ALIAS_ADD = "entity.alias_add"
    REVIEW_ADD_ALIAS = "review.add_alias"
    REVIEW_MERGE = "review.merge"
    REVIEW_DELETE_LINK = "review.delete_link"
    REVIEW_DISMISS = "review.dismiss"
    REVIEW_SAME = "review.same", "review.same (a sweep's proposal judged the same)"
    REVIEW_WRONG = "review.wrong", "review.wrong (a sweep's proposal judged not the same)"
    REVIEW_REVERT = "review.revert"
    SWEEP_APPLY = "sweep.apply"
    SWEEP_REVERSE = "sweep.reverse"
    SWEEP_SAMPLE = "sweep.sample"

    @classmethod
    def decision(cls, action: str) -> AuditAction:
        """The audit action of a curator's decision, e.g. `merge` -> `review.merge`."""
        return cls(f"{DECISION_PREFIX}{action}")


class AuditTarget(models.TextChoices):
    DRAWER = "drawer"
    ENTITY = "entity"
    REVIEW_ITEM = "review_item"
    DECISION = "decision"
    SWEEP = "sweep"


def actor_label(actor: Actor) -> str:
    """How the log names who acted: the username, or "system" for a command or a migration."""
    if actor is None:
        return "system"
    return getattr(actor, "get_username", lambda: str(actor))()


class AuditEntryQuerySet(models.QuerySet["AuditEntry"]):
    def record(
        self,
        *,
        actor: Actor,
        action: AuditAction,
        target_type: AuditTarget,
        target_id: object,
        before: dict[str, Any] | None = None,
        after: dict[str, Any] | None = None,
        data: dict[str, Any] | None = None,
        batch: uuid.UUID | None = None,
        reverts: AuditEntry | None = None,
    ) -> AuditEntry:
        """Append one audit row: the only way rows are written. Call it inside the transaction
        that makes the change, so the change and its record commit together or not at all."""
        return self.create(
            actor=acting_user(actor),
            actor_label=actor_label(actor),
            action=AuditAction(action),
            target_type=AuditTarget(target_type),
            target_id=str(target_id),
            before=before,
            after=after,
            data=data or {},
            batch=batch,
            reverts=reverts,
        )

    def delete(self) -> NoReturn:
        raise PermissionError("The audit log is append-only.")

    def update(self, **kwargs: Any) -> NoReturn:
        raise PermissionError("The audit log is append-only.")


class AuditEntry(models.Model):
    """Append-only: who did what to which record, with the state before and after.

    The target is a bare type and id, not a foreign key: the log must outlive what it describes (a
    deleted drawer's row keeps what it held), a target may be a row of any model or a review item
    (`d12`), and rows are never changed, so a key could neither cascade nor be set to null. Only
    `reverts` is a foreign key: from a revert to the decision it reverts, both audit rows, which
    are never deleted.
    """

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    actor_label = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    action = models.CharField(max_length=64, choices=AuditAction.choices)
    target_type = models.CharField(max_length=64, choices=AuditTarget.choices)
    target_id = models.CharField(max_length=64)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    data = models.JSONField(default=dict, blank=True)
    batch = models.UUIDField(null=True, blank=True)
    reverts = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="reverted_by",
        help_text="On a revert: the decision it reverts.",
    )

    objects = AuditEntryQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "audit entries"
        indexes = [
            models.Index(fields=["target_type", "target_id"], name="audit_target"),
            models.Index(fields=["action", "-id"], name="audit_action"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor_label} {self.action} {self.target_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise PermissionError("The audit log is append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise PermissionError("The audit log is append-only.")
