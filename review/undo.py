"""The visible Undo offered after a decision (issue 13, defect 3).

The view that decides remembers what it did in the session; the next page the curator sees (the
next item, loaded in place or not, or the queue) shows an Undo button for exactly that, once: a
plain POST form, so it works without JavaScript and on a phone. It names the decision (or the
batch of a bulk decision) rather than "the last one", so a decision made meanwhile in another tab
is not the one undone.
"""

from __future__ import annotations

from typing import TypedDict

from django.http import HttpRequest

from palace.models import AuditEntry
from review.items import done_words

SESSION_KEY = "review_undo_offer"


class UndoOffer(TypedDict):
    decision: int | None
    batch: str | None
    label: str


def offer_undo(request: HttpRequest, entry: AuditEntry, *, batch_size: int | None = None) -> None:
    """Offer to undo this decision, or all of its batch when it has others (a bulk decision,
    an alias with the pairs it settled). `batch_size` is counted when not given."""
    size = 1
    if entry.batch is not None:
        size = batch_size or AuditEntry.objects.filter(batch=entry.batch).count()
    if size > 1:
        offer = UndoOffer(
            decision=None, batch=str(entry.batch), label=f"Undo all {size} decisions of this batch"
        )
    else:
        label = f"Undo {done_words(entry.action)} on {entry.data.get('item', '')}"
        offer = UndoOffer(decision=entry.pk, batch=None, label=label)
    request.session[SESSION_KEY] = offer


def take_undo_offer(request: HttpRequest) -> UndoOffer | None:
    """The offer, once: it is shown on the first page rendered after the decision."""
    session = getattr(request, "session", None)
    return session.pop(SESSION_KEY, None) if session is not None else None
