"""Reverting decisions to the exact prior state. A revert is itself audited ("review.revert",
target the decision), so the log stays append-only and "reverted" is read from it rather than
written into it."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import IntegrityError, transaction

from dedup.errors import NotFound
from palace.models import DECISION_PREFIX, AuditAction, AuditEntry, AuditTarget
from review.items import REVERT_ACTION, Action, AlreadyDecided, ItemRef, RevertBlocked
from review.selectors.audit import not_reverted
from review.services.actions import ACTIONS


def reverts_of(entry: AuditEntry) -> AuditEntry | None:
    return AuditEntry.objects.filter(reverts=entry).first()


def dependents(entry: AuditEntry) -> list[AuditEntry]:
    """Later decisions, not reverted, that touched any object this one touched."""
    touched = set(entry.data.get("touches", []))
    later = not_reverted(
        AuditEntry.objects.filter(action__startswith=DECISION_PREFIX, pk__gt=entry.pk).exclude(
            action=REVERT_ACTION
        )
    ).order_by("pk")
    return [e for e in later if touched & set(e.data.get("touches", []))]


def _decision(decision: int | AuditEntry) -> AuditEntry:
    entry = (
        decision
        if isinstance(decision, AuditEntry)
        else AuditEntry.objects.filter(pk=decision).first()
    )
    if (
        entry is None
        or not entry.action.startswith(DECISION_PREFIX)
        or entry.action == REVERT_ACTION
    ):
        raise NotFound("No decision with that id.", code="decision_not_found")
    done = reverts_of(entry)
    if done is not None:
        raise AlreadyDecided(
            f"{done.actor_label} already reverted this decision "
            f"on {done.created_at:%Y-%m-%d at %H:%M} UTC.",
            code="already_reverted",
        )
    return entry


def revert(
    *, decision: int | AuditEntry, actor: Any, cascade: bool = False, note: str = ""
) -> list[AuditEntry]:
    """Undo a decision, restoring the exact prior state. If later decisions touched the same
    objects, refuse and name them, or (cascade) revert them too, newest first."""
    with transaction.atomic():
        entry = _decision(decision)
        later = dependents(entry)
        if later and not cascade:
            raise RevertBlocked(
                "Later decisions depend on this one: revert them first, or revert them together.",
                details={"depends_on_this": [e.pk for e in later]},
            )
        batch = uuid.uuid4() if later else entry.batch
        reverted = [_revert_one(e, actor, note, batch) for e in reversed(later)]
        reverted.append(_revert_one(entry, actor, note, batch))
    return reverted


def _revert_one(entry: AuditEntry, actor: Any, note: str, batch: uuid.UUID | None) -> AuditEntry:
    ref = ItemRef.parse(entry.data["item"])
    action = Action(entry.action.removeprefix(DECISION_PREFIX))
    try:
        ACTIONS[ref.kind][action].undo(ref, before=entry.before, after=entry.after)
    except IntegrityError as error:
        raise RevertBlocked(
            "Restoring the prior state would clash with what was written since "
            "(for example a drawer now holding the same name).",
        ) from error
    return AuditEntry.objects.record(
        actor=actor,
        action=AuditAction.REVIEW_REVERT,
        target_type=AuditTarget.DECISION,
        target_id=entry.pk,
        before=entry.after,
        after=entry.before,
        data={"item": str(ref), "reverts": entry.pk, "reverted_action": str(action), "note": note},
        batch=batch,
        reverts=entry,
    )


def last_own_decision(actor: Any) -> AuditEntry | None:
    """The curator's latest decision that is not reverted yet (for "undo")."""
    own = AuditEntry.objects.filter(actor=actor, action__startswith=DECISION_PREFIX).exclude(
        action=REVERT_ACTION
    )
    return not_reverted(own).order_by("-pk").first()
