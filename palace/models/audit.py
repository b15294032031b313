"""The audit log: append-only, one entry point (`AuditEntry.objects.record`)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, NoReturn

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.fields.json import KeyTransform
from django.utils import timezone

if TYPE_CHECKING:
    pass
from palace.models.common import Actor, acting_user

DECISION_PREFIX = "review."


class AuditAction(models.TextChoices):
    """Everything the audit log records, named once. Decisions on review items are `review.*`."""

    DRAWER_SUPERSEDE = "drawer.supersede"
    DRAWER_DELETE = "drawer.delete"
    ENTITY_ALIAS_ADD = "entity.alias_add"
    ENTITY_ALIAS_REMOVE = "entity.alias_remove"
    IMPORT_APPLY = "import.apply"
    IMPORT_REVERSE = "import.reverse"
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
    WING_RENAME = "wing.rename"
    WING_DELETE = "wing.delete", "wing.delete (an empty wing)"
    ROOM_RENAME = "room.rename"
    ROOM_MOVE = "room.move", "room.move (to another wing, perhaps renamed too)"
    ROOM_DELETE = "room.delete", "room.delete (an empty room)"
    DEMO_SEED = "demo.seed", "demo.seed (seed_demo filled the palace, once)"

    @classmethod
    def decision(cls, action: str) -> AuditAction:
        """The audit action of a curator's decision, e.g. `merge` -> `review.merge`."""
        return cls(f"{DECISION_PREFIX}{action}")


class AuditTarget(models.TextChoices):
    DRAWER = "drawer"
    ENTITY = "entity"
    REVIEW_ITEM = "review_item"
    DECISION = "decision"
    IMPORT = "import"
    SWEEP = "sweep"
    WING = "wing"
    ROOM = "room"
    PALACE = "palace"


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

    # Who acted, kept as it was when the user is deleted (rows are never changed): no database
    # constraint, nothing done on delete; `actor_label` names them for reading.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
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
            # A batch's rows (a batch revert reads them, and first asks whether the batch is
            # there at all, before its request's body): a scan of the whole log otherwise.
            models.Index(fields=["batch"], condition=Q(batch__isnull=False), name="audit_batch"),
            # The decisions that redirected an entity (`before.other.id`: the side an alias or
            # a merge made answer through the other), which an undo reads to tell which names
            # never saw it (`review.selectors.audit.redirect_windows`): 1.5 to 3.4 ms against
            # 97 to 107 by a scan at 200,000 such decisions on PostgreSQL. (SQLite cannot use
            # it: Django passes the JSON path as a parameter, which an index never matches.)
            models.Index(
                KeyTransform("id", KeyTransform("other", "before")),
                condition=Q(action__in=[AuditAction.decision(a) for a in ("add_alias", "merge")]),
                name="audit_redirected_entity",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor_label} {self.action} {self.target_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise PermissionError("The audit log is append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise PermissionError("The audit log is append-only.")
