"""Reads of the audit log: the log page, which decisions are reverted, an item's last decision."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import BigIntegerField, Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Cast, Substr
from django.utils import timezone

from dedup.errors import InvalidInput
from dedup.services import Windows
from palace.models import (
    DECISION_PREFIX,
    AuditAction,
    AuditEntry,
    AuditTarget,
    DrawerLink,
    EntityLink,
)
from review.curators import DECIDE_PERMISSION
from review.items import ITEM_TARGET, REVERT_ACTION, Action, ItemKind, ItemRef

# The rows whose `before` holds a removed drawer (its content, links and mentions): a deletion's,
# and an import reversal's row for each drawer it removed.
REMOVED_DRAWER_ACTIONS = (AuditAction.DRAWER_DELETE, AuditAction.IMPORT_REVERSE)


def sees_deleted_content(user: object) -> bool:
    """Deleted content (a removed drawer's row's `before`) is for curators and admins only."""
    return bool(
        getattr(user, "is_superuser", False)
        or (hasattr(user, "has_perm") and user.has_perm(DECIDE_PERMISSION))
    )


def without_deleted_content(entries: Iterable[AuditEntry], user: object) -> Iterator[AuditEntry]:
    """The entries as `user` may see them: unless a curator or an admin, a deleted drawer's
    content is blanked (in memory only; the rows are never saved again)."""
    hide = not sees_deleted_content(user)
    for entry in entries:
        removed = entry.action in REMOVED_DRAWER_ACTIONS and entry.target_type == AuditTarget.DRAWER
        if hide and removed:
            entry.before = None
        yield entry


@dataclass(frozen=True)
class AuditFilters:
    actor: str = ""
    action: str = ""
    item: str = ""
    since: str = ""
    until: str = ""

    @classmethod
    def from_params(cls, params: Mapping) -> AuditFilters:
        return cls(
            *(
                (params.get(name) or "").strip()
                for name in ("actor", "action", "item", "since", "until")
            )
        )


def audit_entries(filters: AuditFilters) -> QuerySet[AuditEntry]:
    queryset = AuditEntry.objects.select_related("actor").order_by("-id")
    if filters.actor:
        queryset = queryset.filter(actor_label=filters.actor)
    if filters.action:
        queryset = queryset.filter(action=filters.action)
    if filters.item:
        queryset = queryset.filter(Q(target_id=filters.item) | Q(data__item=filters.item))
    for name, lookup, shift in (("since", "created_at__gte", 0), ("until", "created_at__lt", 1)):
        raw = getattr(filters, name)
        if raw:
            try:
                day = date.fromisoformat(raw)
            except ValueError:
                raise InvalidInput(f"{name} must be a date like 2026-11-29.") from None
            queryset = queryset.filter(
                **{
                    lookup: timezone.make_aware(
                        datetime.combine(day + timedelta(days=shift), datetime.min.time())
                    )
                }
            )
    return queryset


def reverted_ids(entries: Iterable[AuditEntry]) -> set[int]:
    ids = [e.pk for e in entries]
    reverted = AuditEntry.objects.filter(reverts__in=ids).values_list("reverts", flat=True)
    return {pk for pk in reverted if pk is not None}


def not_reverted(entries: QuerySet[AuditEntry]) -> QuerySet[AuditEntry]:
    """The decisions among `entries` that no revert targets (a revert is a later audit row)."""
    return entries.exclude(Exists(AuditEntry.objects.filter(reverts=OuterRef("pk"))))


def decided_since(since: datetime) -> QuerySet[AuditEntry, Any]:
    """The items decided since `since` that stay decided and that the queue's *decided* list
    shows, each once (their `target_id` values): a reverted decision, a revert row and a sweep
    proposal's verdict are not counted, nor is a decision whose link is gone (deleted as wrong,
    or a cluster's distinct pair; a drawer deleted since), which no list shows."""
    # An item's id is its kind's letter and its link's id (`ItemRef`).
    link_id = Cast(Substr(OuterRef("target_id"), 2), BigIntegerField())
    decided_drawer_link = DrawerLink.objects.filter(pk=link_id).exclude(status="open")
    decided_entity_link = EntityLink.objects.filter(pk=link_id).exclude(status="open")
    listed = (Q(target_id__startswith=ItemKind.DRAWER.value) & Exists(decided_drawer_link)) | (
        Q(target_id__startswith=ItemKind.ENTITY.value) & Exists(decided_entity_link)
    )
    decisions = AuditEntry.objects.filter(
        action__startswith=DECISION_PREFIX, created_at__gte=since, target_type=ITEM_TARGET
    ).exclude(action=REVERT_ACTION)
    return not_reverted(decisions).filter(listed).values("target_id").distinct()


def batch_decisions(batch: uuid.UUID | str) -> QuerySet[AuditEntry]:
    """The decisions of a batch that are not reverted yet, oldest first."""
    rows = AuditEntry.objects.filter(batch=batch, action__startswith=DECISION_PREFIX)
    return not_reverted(rows.exclude(action=REVERT_ACTION)).order_by("pk")


def last_decision(ref: ItemRef) -> AuditEntry | None:
    return (
        AuditEntry.objects.filter(target_type=ITEM_TARGET, target_id=str(ref))
        .exclude(action=REVERT_ACTION)
        .order_by("-id")
        .first()
    )


def redirecting(entity_ids: list[int]) -> QuerySet[AuditEntry]:
    """The decisions that redirected these entities (an alias or a merge of an entity link: the
    entity is its `before.other`), read by the index `audit_redirected_entity`."""
    return AuditEntry.objects.filter(
        action__in=[AuditAction.decision(Action.ADD_ALIAS), AuditAction.decision(Action.MERGE)],
        data__item__startswith=ItemKind.ENTITY,
        before__other__id__in=entity_ids,
    ).order_by()


def redirect_windows(entity_ids: list[int]) -> Windows:
    """When each of these entities was redirected by a curator's alias or merge: from the
    decision until its revert, or until None (it still is, or its revert is under way). Two
    statements, read by `dedup.services.entity_relinked` for an undo."""
    found = list(redirecting(entity_ids).values_list("pk", "before__other__id", "created_at"))
    # By the ids, not a sub-select: given one, PostgreSQL's estimate of it led to a scan of the
    # whole log (176 ms at 200,000 decisions, against under 1 ms).
    reverted = dict(
        AuditEntry.objects.filter(reverts_id__in=[pk for pk, _, _ in found]).values_list(
            "reverts_id", "created_at"
        )
    )
    windows: Windows = {}
    for pk, other, at in found:
        windows.setdefault(other, []).append((at, reverted.get(pk)))
    return windows
