"""What became of a review item whose link no longer exists, from the audit log: a curator
deleted it as wrong, a drawer of the pair was deleted (and its links with it), or a sweep that
made it was reversed. The console shows this instead of a bare 404."""

from __future__ import annotations

from dataclasses import dataclass

from palace.models import AuditAction, AuditEntry, DrawerLink, EntityLink
from review.items import ItemKind, ItemRef
from review.selectors.audit import last_decision


@dataclass(frozen=True)
class GoneItem:
    ref: ItemRef
    what: str  # what happened to the link, e.g. "its drawer ... was deleted"
    entry: AuditEntry | None  # the audit row that says so (None: the log does not say)

    @property
    def audit_item(self) -> str:
        """What to filter the audit log by to find that row."""
        return self.entry.target_id if self.entry is not None else str(self.ref)


def gone_item(ref: ItemRef) -> GoneItem | None:
    """Why the link of `ref` is gone, or None if there never was such a link (a real 404).
    Called only when the link is missing, so its one or two queries cost nothing on the hot
    path; the matches are on a quoted id inside the JSON text (`"12"`), which works alike on
    SQLite and PostgreSQL and cannot match "112"."""
    if ref.is_proposal:  # a proposal goes only with its run
        return None
    decision = last_decision(ref)
    if decision is not None and decision.action == AuditAction.REVIEW_DELETE_LINK:
        return GoneItem(ref, "a curator deleted it as wrong (delete link)", decision)
    key = "drawer_links" if ref.kind is ItemKind.DRAWER else "entity_links"
    quoted = {f"data__{key}__icontains": f'"{ref.pk}"'}
    if ref.kind is ItemKind.DRAWER:
        deleted = (
            AuditEntry.objects.filter(action=AuditAction.DRAWER_DELETE, **quoted)
            .order_by("-pk")
            .first()
        )
        if deleted is not None:
            return GoneItem(ref, f"its drawer {deleted.target_id} was deleted", deleted)
    reversed_ = (
        AuditEntry.objects.filter(action=AuditAction.SWEEP_REVERSE, **quoted)
        .order_by("-pk")
        .first()
    )
    if reversed_ is not None:
        return GoneItem(
            ref, f"sweep #{reversed_.target_id}, which made it, was reversed", reversed_
        )
    model = DrawerLink if ref.kind is ItemKind.DRAWER else EntityLink
    if model.objects.filter(pk__gt=ref.pk).exists():  # the id was handed out: it was deleted
        return GoneItem(ref, "it was deleted", None)
    return None
