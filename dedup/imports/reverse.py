"""Reversing an import: removing exactly the drawers it created and the links they made.

Later writes are left untouched, so a drawer the import created is kept (and reported with the
reasons) when anything outside the import has since come to rest on it: a drawer written later
links to it, a curator decided one of its links, it was superseded or supersedes another, a
merge consolidated into it, or a mention was recorded on it after the import. Removing such a
drawer would take that later work with it; keeping it loses nothing, and a curator can delete it
by hand. Everything else the import created goes, with its links and mentions, one audit row per
drawer (holding what it held) and one for the import, all in one transaction and one batch.
A removed drawer's id may be used again: importing the same file again stores it anew.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q

from dedup.errors import Conflict
from dedup.services import drawer_snapshot
from dedup.services.config import Actor
from palace.models import (
    AuditAction,
    AuditEntry,
    AuditTarget,
    Drawer,
    DrawerLink,
    Import,
    Mention,
)


@dataclass(frozen=True)
class Reversal:
    removed: list[str]
    links_removed: int
    kept: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return {"removed": self.removed, "links_removed": self.links_removed, "kept": self.kept}


def import_reverse(*, imported: Import, actor: Actor = None) -> Reversal:
    """Remove what the import created and has not been built on since; report what is kept."""
    with transaction.atomic():
        imported = Import.objects.select_for_update().get(pk=imported.pk)
        if imported.status == Import.Status.REVERSED:
            raise Conflict("The import was reversed already.", code="import_reversed")
        if imported.status != Import.Status.DONE:
            raise Conflict("The import has not finished.", code="import_not_finished")
        drawers = list(
            Drawer.objects.select_for_update(of=("self",))
            .filter(imports=imported)
            .select_related("room__wing", "superseded_by")
            .order_by("id")
        )
        own = {drawer.pk for drawer in drawers}
        kept = {d.pk: reasons for d in drawers if (reasons := _later_work(d, own, imported))}
        removed = [drawer for drawer in drawers if drawer.pk not in kept]
        reversal = _remove(imported, removed, actor)
        reversal = Reversal(
            removed=reversal.removed,
            links_removed=reversal.links_removed,
            kept=[{"drawer": str(d.uuid), "reasons": kept[d.pk]} for d in drawers if d.pk in kept],
        )
        imported.status = Import.Status.REVERSED
        imported.summary = {**imported.summary, "reversal": reversal.as_dict()}
        imported.save(update_fields=["status", "summary"])
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.IMPORT_REVERSE,
            target_type=AuditTarget.IMPORT,
            target_id=imported.pk,
            before={"status": Import.Status.DONE},
            after={"status": Import.Status.REVERSED},
            data=reversal.as_dict(),
        )
    return reversal


def _later_work(drawer: Drawer, own: set[int], imported: Import) -> list[str]:
    """Why a drawer the import created must stay: what was done to it since, outside the
    import."""
    reasons = []
    if DrawerLink.objects.filter(older=drawer).exclude(newer_id__in=own).exists():
        reasons.append("a later drawer links to it")
    if (
        DrawerLink.objects.filter(Q(newer=drawer) | Q(older=drawer))
        .exclude(status=DrawerLink.Status.OPEN)
        .exists()
    ):
        reasons.append("a curator decided one of its links")
    if drawer.valid_to is not None and drawer.superseded_by_id not in own:
        reasons.append("it was superseded")
    if Drawer.objects.filter(superseded_by=drawer).exclude(pk__in=own).exists():
        reasons.append("it supersedes another drawer")
    if drawer.consolidation:
        reasons.append("drawers were merged into it")
    if (
        imported.finished_at
        and Mention.objects.filter(drawer=drawer, created_at__gt=imported.finished_at).exists()
    ):
        reasons.append("a mention was recorded on it later")
    return reasons


def _remove(imported: Import, drawers: list[Drawer], actor: Actor) -> Reversal:
    batch = uuid.uuid4()
    links = DrawerLink.objects.filter(Q(newer__in=drawers) | Q(older__in=drawers))
    links_removed = links.count()
    for drawer in drawers:
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.IMPORT_REVERSE,
            target_type=AuditTarget.DRAWER,
            target_id=drawer.uuid,
            before=drawer_snapshot(drawer),
            after=None,
            data={"import": imported.pk},
            batch=batch,
        )
    Drawer.objects.filter(pk__in=[d.pk for d in drawers]).delete()
    return Reversal([str(d.uuid) for d in drawers], links_removed, [])
