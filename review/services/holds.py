"""Item holds: a curator who opens an item holds it for a short time, renewed while they stay on
it, so that a second curator is served another item (see `review.models.ItemHold`).

Taking a hold is one conditional update or one insert, so it is safe across gunicorn workers
without a lock: the update only takes a row that is the curator's own or expired (on PostgreSQL
a concurrent update re-checks that condition once the first commits), and the unique item key
lets one of two racing inserts win.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from review.items import ItemRef
from review.models import ItemHold

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# How long an item stays held after its last renewal; the item page renews it every
# HOLD_RENEW_SECONDS while it is open, so a curator who leaves frees it within two minutes.
HOLD_SECONDS = 120
HOLD_RENEW_SECONDS = 60


def hold_take(*, item: ItemRef, curator: User) -> ItemHold:
    """Hold `item` for `curator` (or renew their hold) unless someone else holds it.

    Returns the hold in force: the curator's own, or the other curator's (whose `curator` is then
    not this one). Taking a hold releases the curator's holds on other items: one curator looks
    at one item at a time, and the one they left is served to the others at once.
    """
    now = timezone.now()
    expires_at = now + timedelta(seconds=HOLD_SECONDS)
    key = str(item)
    with transaction.atomic():
        ItemHold.objects.filter(expires_at__lte=now).delete()  # expired holds, cleaned lazily
        ItemHold.objects.filter(curator=curator).exclude(item=key).delete()
        taken = ItemHold.objects.filter(Q(curator=curator) | Q(expires_at__lte=now), item=key)
        if not taken.update(curator=curator, expires_at=expires_at):
            try:
                with transaction.atomic():
                    ItemHold.objects.create(item=key, curator=curator, expires_at=expires_at)
            except IntegrityError:
                pass  # another curator's live hold: returned below
        hold = ItemHold.objects.select_related("curator").filter(item=key).first()
    # None only if the other curator let go between our insert and this read: the item is free,
    # and the next renewal takes it.
    return hold or ItemHold(item=key, curator=curator, expires_at=now)


def hold_release(*, item: ItemRef, curator: User) -> None:
    """Let go of the curator's hold on `item` (after deciding it); another's hold is left."""
    ItemHold.objects.filter(item=str(item), curator=curator).delete()
