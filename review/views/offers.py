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

from django.http import HttpRequest

from palace.models import AuditEntry
from review.undo import SESSION_KEY, offer_undo

OFFERED_KEY = "review_undo_offers"
# Offers not used yet, newest last: one per tab the curator decides in is plenty. An Undo still
# on screen in another tab keeps working; one older than these is refused (the audit log reverts).
KEEP = 20


def offer(request: HttpRequest, entry: AuditEntry, *, batch_size: int | None = None) -> None:
    """Show an Undo for `entry` (or its batch) on the next page, and accept it at `/undo`."""
    offer_undo(request, entry, batch_size=batch_size)
    shown = request.session[SESSION_KEY]
    named = f"batch:{shown['batch']}" if shown["batch"] else f"decision:{shown['decision']}"
    offered = [o for o in request.session.get(OFFERED_KEY, []) if o != named]
    request.session[OFFERED_KEY] = [*offered, named][-KEEP:]


def take_offered(request: HttpRequest, *, decision: int | None, batch: str) -> bool:
    """Whether the undo posted names an Undo offered and not used yet; if so, it is used now.

    Taken before the revert is tried, so a second POST (a double press whose page script did not
    run, a retry) finds it used, whatever became of the first."""
    named = f"batch:{batch.strip().lower()}" if batch else f"decision:{decision}"
    offered = request.session.get(OFFERED_KEY, [])
    if (batch or decision is not None) and named in offered:
        request.session[OFFERED_KEY] = [o for o in offered if o != named]
        return True
    return False
