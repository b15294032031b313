"""Which Undo the curator was offered, so `/undo` does that one, once.

`review.undo` shows the offer on the next page rendered and forgets it there (it is a one-shot
display). The undo itself needs to know later what was offered: the curator may read the next
item for minutes before pressing `u`. So the views that offer an undo also record here what it
names, and `/undo` accepts only that, and only once. An undo that names nothing, or a decision
that is not the one last offered (an older one, or one already undone), is refused: `u` pressed
twice, or a stale Undo button, must not walk back through the curator's history. The audit log
still reverts any decision, by its own button.
"""

from __future__ import annotations

from django.http import HttpRequest

from palace.models import AuditEntry
from review.undo import SESSION_KEY, offer_undo

OFFERED_KEY = "review_undo_offered"


def offer(request: HttpRequest, entry: AuditEntry, *, batch_size: int | None = None) -> None:
    """Show an Undo for `entry` (or its batch) on the next page, and accept it at `/undo`."""
    offer_undo(request, entry, batch_size=batch_size)
    shown = request.session[SESSION_KEY]
    request.session[OFFERED_KEY] = {"decision": shown["decision"], "batch": shown["batch"]}


def take_offered(request: HttpRequest, *, decision: int | None, batch: str) -> bool:
    """Whether the undo posted names what was last offered; if so, it is no longer offered.

    Taken before the revert is tried, so a second POST (a double press whose page script did not
    run, a retry) finds nothing offered, whatever became of the first."""
    offered = request.session.get(OFFERED_KEY)
    if not offered:
        return False
    if batch:
        matches = str(offered.get("batch") or "") == batch.strip().lower()
    else:
        matches = decision is not None and offered.get("decision") == decision
    if matches:
        del request.session[OFFERED_KEY]
    return matches
