"""Which Undo the curator was offered, so `/undo` does that one, once.

`review.undo` shows the offer on the next page rendered and forgets it there (it is a one-shot
display). The undo itself needs to know later what was offered: the curator may read the next
item for minutes before pressing `u`. So the views that offer an undo also record here what it
names, and `/undo` accepts only what was offered, and each only once. An undo that names nothing,
or a decision never offered or offered and used already, is refused: `u` pressed twice, or a
stale Undo button, must not walk back through the curator's history. The audit log still
reverts any decision, by its own button.
"""

from __future__ import annotations

from typing import cast

from django.http import HttpRequest
from django.utils import timezone

from palace.models import AuditEntry
from review.models import UndoOffer
from review.undo import SESSION_KEY, offer_undo

# Offers not used yet, newest kept: one per tab the curator decides in is plenty. An Undo still
# on screen in another tab (or another browser) keeps working; one older than these is refused
# (the audit log reverts).
KEEP = 20


def offer(request: HttpRequest, entry: AuditEntry, *, batch_size: int | None = None) -> None:
    """Show an Undo for `entry` (or its batch) on the next page, and accept it at `/undo`: one
    row a name (`UndoOffer`), so offers made at once in two tabs are both kept."""
    offer_undo(request, entry, batch_size=batch_size)
    shown = request.session[SESSION_KEY]
    named = f"batch:{shown['batch']}" if shown["batch"] else f"decision:{shown['decision']}"
    # Two statements: the offer upserted (one shown again is new again), then any beyond the
    # newest KEEP dropped.
    curator = cast(int, request.user.pk)  # the views that offer one need a curator
    UndoOffer.objects.bulk_create(
        [UndoOffer(curator_id=curator, named=named, created_at=timezone.now())],
        update_conflicts=True,
        unique_fields=["curator", "named"],
        update_fields=["created_at"],
    )
    mine = UndoOffer.objects.filter(curator_id=curator)
    newest = mine.order_by("-created_at", "-id").values("pk")[:KEEP]
    mine.exclude(pk__in=newest).delete()


def take_offered(request: HttpRequest, *, decision: int | None, batch: str) -> bool:
    """Whether the undo posted names an Undo offered and not used yet; if so, it is used now.

    Taken before the revert is tried, so a second POST (a double press whose page script did not
    run, a retry) finds it used, whatever became of the first: the offer's row is deleted, and
    of two requests deleting it only one deletes a row."""
    if not batch and decision is None:
        return False
    named = f"batch:{batch.strip().lower()}" if batch else f"decision:{decision}"
    deleted, _ = UndoOffer.objects.filter(curator_id=request.user.pk, named=named).delete()
    return deleted > 0
