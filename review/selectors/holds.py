"""Who holds which review item now (see `review.services.holds`), and the queue's next item that
nobody else holds. Expired holds are ignored here; the next take deletes them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.utils import timezone

from palace.models import DrawerLink, EntityLink
from review.items import ItemRef
from review.models import ItemHold, Proposal
from review.selectors.filters import QueueFilters
from review.selectors.queue import cursor_after, queue_page

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


def _live_held_by_others(user: User | AnonymousUser):
    holds = ItemHold.objects.filter(expires_at__gt=timezone.now())
    return holds.exclude(curator_id=user.pk) if user.is_authenticated else holds


def holders(items: Iterable[ItemRef], user: User | AnonymousUser) -> dict[str, str]:
    """The items of `items` that another curator holds, by item id: the holder's username.
    One query, whatever the number of items."""
    keys = [str(item) for item in items]
    if not keys:
        return {}
    holds = _live_held_by_others(user).filter(item__in=keys).select_related("curator")
    return {hold.item: hold.curator.get_username() for hold in holds}


def next_untaken(
    filters: QueueFilters,
    user: User | AnonymousUser,
    *,
    after: DrawerLink | EntityLink | Proposal | None = None,
) -> ItemRef | None:
    """The first item of the queue (or the first after `after`) that no other curator holds."""
    return next(iter(untaken(filters, user, after=after, count=1)), None)


def untaken(
    filters: QueueFilters,
    user: User | AnonymousUser,
    *,
    after: DrawerLink | EntityLink | Proposal | None = None,
    count: int = 1,
) -> list[ItemRef]:
    """The first `count` items of the queue (or after `after`) that no other curator holds:
    after a decision, the next item and the one after it, read together.

    One query for the holds, then one page of the queue just long enough to pass every held
    item: there are at most as many live holds as curators at work, so the page stays short.
    """
    held = set(_live_held_by_others(user).values_list("item", flat=True))
    cursor = cursor_after(filters, after) if after is not None else None
    page = queue_page(filters, cursor=cursor, size=len(held) + count)
    return [item.ref for item in page.items if str(item.ref) not in held][:count]


def still_open(ref: ItemRef) -> bool:
    """Whether `ref` is still to decide (an open link, or a proposal not judged yet): one query.
    A hold is renewed only on such an item; a decided one is held by nobody."""
    if ref.is_proposal:
        return Proposal.objects.filter(
            pk=ref.pk, status=Proposal.Status.PROPOSED, verdict=""
        ).exists()
    model = DrawerLink if ref.is_drawer else EntityLink
    return model.objects.filter(pk=ref.pk, status=DrawerLink.Status.OPEN).exists()
