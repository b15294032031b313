"""Item holds: a curator who opens an item holds it for a short time, renewed while they stay on
it, so that a second curator is served another item (see `review.models.ItemHold`).

Taking a hold is one conditional upsert, so it is safe across gunicorn workers without a lock
and costs the same queries whether it creates, renews or finds someone else's hold.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import connection
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
    # Expired holds (cleaned lazily) and the curator's other holds, in one statement, committed
    # on its own: in one transaction with the upsert, two curators swapping items (A from Y to
    # X, B from X to Y) would lock Y then X and X then Y, a deadlock.
    ItemHold.objects.filter(Q(expires_at__lte=now) | (Q(curator=curator) & ~Q(item=key))).delete()
    _upsert(key, curator.pk, expires_at, now)
    hold = ItemHold.objects.select_related("curator").filter(item=key).first()
    # None only if the other curator let go between the upsert and this read: the item is free,
    # and the next renewal takes it.
    return hold or ItemHold(item=key, curator=curator, expires_at=now)


def _upsert(key: str, curator_id: int, expires_at: datetime, now: datetime) -> None:
    """Insert the hold, or take over the row if it is this curator's or expired; another
    curator's live hold is left as it is. Hand-written because Django's upsert
    (`bulk_create(update_conflicts=True)`) cannot make the update conditional; the statement is
    the same on PostgreSQL and SQLite (3.24+), and on PostgreSQL ON CONFLICT is atomic against
    a racing insert or update of the same item."""
    table = connection.ops.quote_name(ItemHold._meta.db_table)
    adapt = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (item, curator_id, expires_at) VALUES (%s, %s, %s) "
            "ON CONFLICT (item) DO UPDATE SET curator_id = excluded.curator_id, "
            f"expires_at = excluded.expires_at WHERE {table}.curator_id = excluded.curator_id "
            f"OR {table}.expires_at <= %s",
            [key, curator_id, adapt(expires_at), adapt(now)],
        )


def hold_release(*, item: ItemRef, curator: User) -> None:
    """Let go of the curator's hold on `item` (after deciding it); another's hold is left."""
    ItemHold.objects.filter(item=str(item), curator=curator).delete()
