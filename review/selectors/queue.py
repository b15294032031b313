"""The review queue: both kinds of item (or a sweep's proposals), filtered, keyset-paginated with
a constant number of queries whatever its size."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, cast

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from dedup import cursors, validation
from palace.models import DrawerLink, EntityLink
from review.diff import Segment, compact
from review.items import ItemKind, ItemRef
from review.selectors.audit import decided_since
from review.selectors.filters import (
    BY_TIME,
    DESCENDING,
    QueueFilters,
    QueueStatus,
    drawer_links,
    entity_links,
    proposals,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

    from review.models import Proposal

PAGE_SIZE = 25
MAX_BULK = 1000
Cursor = tuple[float | datetime, ItemKind, int]
KIND_NAMES = {ItemKind.DRAWER: "drawer", ItemKind.ENTITY: "entity", ItemKind.PROPOSAL: "proposal"}


@dataclass
class QueueItem:
    ref: ItemRef
    link: DrawerLink | EntityLink | Proposal
    sort_key: float | datetime

    @property
    def is_drawer(self) -> bool:
        return self.ref.is_drawer

    @property
    def id(self) -> str:
        return str(self.ref)

    @property
    def changes(self) -> list[Segment]:
        """The words a drawer link or a proposal changed, with a few words of context (none for
        an entity pair: its two names are the whole difference). From the rows already read."""
        link = self.link
        if isinstance(link, DrawerLink):
            return compact(link.older.content, link.newer.content)
        if isinstance(link, EntityLink):
            return []
        return proposal_changes(link)


def proposal_changes(proposal: Proposal) -> list[Segment]:
    """The words a proposal's pair changed, from the two texts it keeps as they were proposed
    (the queue's rows and a sweep's proposals table)."""
    return compact(proposal.texts.get("older", ""), proposal.texts.get("newer", ""))


@dataclass
class QueuePage:
    items: list[QueueItem]
    next_cursor: str | None
    counts: dict[str, int] = field(default_factory=dict)
    # Per kind ("drawer", "entity", "proposal"): the filter's rows this page read, and whether
    # that was all of them (every range ended before size + 1 rows). A bound the counts keep to.
    read: dict[str, tuple[int, bool]] = field(default_factory=dict)


def queue_identity(filters: QueueFilters) -> bytes:
    """The queue a cursor pages (`dedup.cursors.list_identity`): its filters and order, which
    define its sequence (the console's and the API's alike): a cursor of another order (a
    similarity read as a distance from the threshold) or filter is `invalid_cursor`."""
    return cursors.list_identity("queue", filters=asdict(filters))


def _encode(item: QueueItem, filters: QueueFilters) -> str:
    key = item.sort_key.isoformat() if hasattr(item.sort_key, "isoformat") else item.sort_key
    # Sealed, as every cursor.
    return cursors.cursor_for([key, item.ref.kind, item.ref.pk], bound=queue_identity(filters))


def _decode(cursor: str, filters: QueueFilters) -> Cursor:
    """The position a cursor `_encode` made for these filters holds, or InvalidInput
    `invalid_cursor` (each value checked, so a forged one is refused as one that does not
    decode)."""
    key, kind, pk = cursors.values_of(cursor, 3, bound=queue_identity(filters))
    try:
        item_kind = ItemKind(kind)
    except (ValueError, TypeError):  # not a kind's letter (a list, an object...)
        raise validation.malformed_cursor() from None
    by_time = filters.order in BY_TIME
    position = validation.cursor_time(key) if by_time else validation.cursor_number(key)
    return position, item_kind, validation.cursor_id(pk)


@dataclass(frozen=True)
class _Run:
    """One indexed range of one table, walked in one direction along one column."""

    column: str
    descending: bool
    bound: object = None  # walk past this value (None: from the start)
    side: Q = field(default_factory=Q)


def _runs(
    order: str, threshold: float, after: Cursor | None, similarity: str = "similarity"
) -> list[_Run]:
    """The index ranges an order reads. "Most uncertain first" (closest to the threshold) is two
    ranges walked outward from the threshold, above it upward and below it downward, so it uses
    the similarity index like the others instead of sorting every open item."""
    if order in ("similarity", "similarity_asc"):
        return [_Run(similarity, order == "similarity", after[0] if after else None)]
    if order in BY_TIME:
        return [_Run("created_at", order == "newest", after[0] if after else None)]
    above = Q(**{f"{similarity}__gte": threshold})
    below = Q(**{f"{similarity}__lt": threshold})
    if after is None:
        return [_Run(similarity, False, None, above), _Run(similarity, True, None, below)]
    at = cast(float, after[0])  # this order's keys are similarities
    distance = abs(at - threshold)
    # The bound is the cursor's own similarity on its side (exact) and its mirror on the other.
    upper = at if at >= threshold else threshold + distance
    lower = at if at < threshold else threshold - distance
    return [_Run(similarity, False, upper, above), _Run(similarity, True, lower, below)]


def _sort_key(
    order: str, threshold: float, link: DrawerLink | EntityLink | Proposal
) -> float | datetime:
    if order == "uncertain":
        return abs(link.similarity - threshold)
    return link.created_at if order in BY_TIME else link.similarity


_UNSHOWN_DRAWER_FIELDS = [
    f"{side}__{field}"
    for side in ("newer", "older")
    for field in (
        "normalized_content",
        "index_text",
        "content_hash",
        "fingerprint",
        "source",
        "consolidation",
    )
]


def _sources(filters: QueueFilters) -> list[tuple[ItemKind, QuerySet]]:
    sources: list[tuple[ItemKind, QuerySet]] = []
    if filters.includes_drawers:
        links = drawer_links(filters).select_related("newer__room__wing", "older__room__wing")
        # A row shows (and the API returns) each drawer's content and place, not its derived
        # columns: the normalised text is as long as the content, and two JSON fields a side
        # were decoded for nothing (a third of the page's rows' cost).
        sources.append((ItemKind.DRAWER, links.defer(*_UNSHOWN_DRAWER_FIELDS)))
    if filters.includes_entities:
        sources.append((ItemKind.ENTITY, entity_links(filters).select_related("newer", "older")))
    if filters.includes_proposals:
        sources.append((ItemKind.PROPOSAL, proposals(filters).select_related("run")))
    return sources


def _past_cursor(
    rows: QuerySet, run: _Run, kind: ItemKind, after: Cursor, descending: bool
) -> QuerySet:
    """The rows of one range that come after the cursor in the queue's order."""
    _, after_kind, after_pk = after
    past = Q(**{f"{run.column}__{'lt' if run.descending else 'gt'}": run.bound})
    same = Q(**{run.column: run.bound})
    # Equal keys: in the kinds' queue order, each by id in the order's sense.
    # `within` (<= or >=) is the index range; the rest only breaks ties.
    within = Q(**{f"{run.column}__{'lte' if run.descending else 'gte'}": run.bound})
    if kind is after_kind:
        tie = Q(pk__lt=after_pk) if descending else Q(pk__gt=after_pk)
        return rows.filter(within & (past | (same & tie)))
    if kind.queue_order > after_kind.queue_order:
        return rows.filter(within)
    return rows.filter(past)


def queue_page(
    filters: QueueFilters, *, cursor: str | None = None, size: int = PAGE_SIZE
) -> QueuePage:
    """One page of the queue: at most `size` items of both kinds in one order.

    Each kind is read by keyset over an index (one range, or two for "most uncertain first"),
    at most size + 1 rows each, and the runs are merged here: the cost does not grow with the
    queue. The order is the sort key, then the kinds' queue order (drawer links before entity
    links), then the id.
    """
    threshold = settings.CASTELLAN_DEDUP_NEAR_THRESHOLD
    after = _decode(cursor, filters) if cursor else None
    descending = filters.order in DESCENDING
    items: list[QueueItem] = []
    read: dict[str, tuple[int, bool]] = {}
    for kind, queryset in _sources(filters):
        # A proposal's similarity is its score.
        column = "score" if kind is ItemKind.PROPOSAL else "similarity"
        lengths = []
        for run in _runs(filters.order, threshold, after, column):
            rows = queryset.filter(run.side)
            if run.bound is not None:
                assert after is not None  # a bound comes from the cursor
                rows = _past_cursor(rows, run, kind, after, descending)
            direction = "-" if run.descending else ""
            tie_direction = "-" if descending else ""
            rows = rows.order_by(f"{direction}{run.column}", f"{tie_direction}pk")[: size + 1]
            found = [
                QueueItem(ItemRef(kind, link.pk), link, _sort_key(filters.order, threshold, link))
                for link in rows
            ]
            items += found
            lengths.append(len(found))
        # A range that ended before size + 1 rows read every row of the filter it holds.
        read[KIND_NAMES[kind]] = (sum(lengths), all(n <= size for n in lengths))
    page = _page(items, filters, size, descending)
    page.read = read if after is None else {}
    return page


def _page(items: list[QueueItem], filters: QueueFilters, size: int, descending: bool) -> QueuePage:
    items.sort(key=lambda i: (i.ref.kind.queue_order, -i.ref.pk if descending else i.ref.pk))
    items.sort(key=lambda i: i.sort_key, reverse=descending)
    page = items[:size]
    if len(items) <= size or not page:
        return QueuePage(page, None)
    last = page[-1]
    # The cursor keeps the raw column value (similarity or time), so bounds stay exact.
    raw = last.link.created_at if filters.order in BY_TIME else last.link.similarity
    return QueuePage(page, _encode(QueueItem(last.ref, last.link, raw), filters))


def queue_refs(filters: QueueFilters, *, limit: int = MAX_BULK) -> list[ItemRef]:
    """Every item matching a filter (for "apply to all"), at most `limit`."""
    refs = []
    if filters.includes_drawers:
        refs += [
            ItemRef(ItemKind.DRAWER, pk)
            for pk in drawer_links(filters).values_list("pk", flat=True)[:limit]
        ]
    if filters.includes_proposals:
        refs += [
            ItemRef(ItemKind.PROPOSAL, pk)
            for pk in proposals(filters).values_list("pk", flat=True)[:limit]
        ]
    if filters.includes_entities:
        rest = limit - len(refs)
        refs += [
            ItemRef(ItemKind.ENTITY, pk)
            for pk in entity_links(filters).values_list("pk", flat=True)[:rest]
        ]
    return refs


def cursor_after(filters: QueueFilters, link: DrawerLink | EntityLink | Proposal) -> str:
    """The cursor of the queue's page that starts just after this item."""
    raw = link.created_at if filters.order in BY_TIME else link.similarity
    return _encode(QueueItem(ItemRef.of(link), link, raw), filters)


# Counts are counted, capped, on the first page only. Counter rows kept by the services would
# make the totals free, but every service that opens or closes an item (writes, decisions,
# reverts, deletions, sweeps' apply) would have to keep them, and they could not count a filter
# (a wing, a similarity range, a text); a count over at most COUNT_CAP + 1 index entries is
# bounded at any size and counts every filter exactly up to the cap. Later pages and the API's
# next pages (with a cursor) count nothing.
#
# A filter on the linked rows (a wing, a room, an entity kind, a text) is not in the links'
# indexes: counting its matches up to the cap could read every open link (a room holding one
# link in a hundred: a million rows at 1,000,000 open items). Its count is taken among the first
# WINDOW links of its status instead (one index range, each joined to its rows: at 1,000,000
# open items 10,000 of them took 61 ms on SQLite): exact when those are all of them, otherwise
# "at least" what it found there.
#
# At 1,000,000 open items (EXPLAIN ANALYZE on the loaded machine, PostgreSQL) a cap of 10,000
# cost 9 to 19 ms a count (two on every first page), a rule's count 73 ms, and a room's window of
# 2,000 links 131 ms: the caps below read a tenth (the open counts) and a quarter (the window).
# A count beyond the cap is shown "1,000+", and never below what the page itself read (`_agree`).
COUNT_CAP = 1_000
WINDOW = 500


class AtLeast(int):
    """A count that reached the cap: at least this many, shown "1,000+"."""

    def __str__(self) -> str:
        return f"{int(self):,}+"


def capped_count(rows: QuerySet) -> int:
    # No ORDER BY: the count reads the index range in its own order and stops at the cap.
    counted = rows.order_by()[: COUNT_CAP + 1].count()
    return AtLeast(COUNT_CAP) if counted > COUNT_CAP else counted


def _window_count(rows: QuerySet, window: QuerySet, all_of_status: int) -> int:
    """The matches among the first WINDOW rows of `window` (the links of the filter's status):
    exact when those are all of them (`all_of_status`, capped, says so), else at least that."""
    counted = rows.filter(pk__in=window.order_by().values("pk")[:WINDOW]).count()
    seen_all = all_of_status <= WINDOW and not isinstance(all_of_status, AtLeast)
    return counted if seen_all else AtLeast(counted)


def _sum(*counts: int) -> int:
    total = sum(int(count) for count in counts)
    return AtLeast(total) if any(isinstance(count, AtLeast) for count in counts) else total


def _kind_counts(filters: QueueFilters, open_counts: dict[str, int]) -> dict[str, int]:
    """The filter's items per kind, capped; a filter on the linked rows counted in a window."""
    by_status = QueueFilters(status=filters.status)
    counts = {"drawer": 0, "entity": 0, "proposal": 0}
    if filters.includes_proposals:
        counts["proposal"] = capped_count(proposals(filters))
    for kind, included, select, joined in (
        ("drawer", filters.includes_drawers, drawer_links, filters.wing or filters.room),
        ("entity", filters.includes_entities, entity_links, filters.kind),
    ):
        if not included:
            continue
        if not (joined or filters.q):
            counts[kind] = capped_count(select(filters))
            continue
        window = select(by_status)
        of_status = (
            open_counts[kind] if filters.status == QueueStatus.OPEN else capped_count(window)
        )
        counts[kind] = _window_count(select(filters), window, of_status)
    return counts


def _agree(counts: dict[str, int], read: dict[str, tuple[int, bool]]) -> dict[str, int]:
    """Counts that never contradict the page: a kind whose ranges the page read to their end
    has exactly the rows it read; otherwise at least those (a window count of a rare room can
    find fewer than the page lists)."""
    for kind, (rows, complete) in read.items():
        if complete:
            counts[kind] = rows
        elif rows > counts[kind]:
            counts[kind] = AtLeast(rows)
    return counts


def queue_counts(
    filters: QueueFilters,
    user: User | AnonymousUser,
    *,
    cursor: str | None = None,
    page: QueuePage | None = None,
) -> dict[str, int]:
    """Counts for the current filters, per kind, and the progress line, each capped at
    COUNT_CAP (an `AtLeast` then); none past the first page (`cursor` given). Given the first
    `page`, the per-kind counts agree with what it read (`_agree`)."""
    if cursor:
        return {}
    today = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    decisions_today = decided_since(today)  # as the queue's "decided" list shows them
    read = page.read if page is not None else {}
    if filters == QueueFilters(order=filters.order):  # the default view: its counts are the totals
        counts = _agree(_kind_counts(filters, {}), read)
        open_items = _sum(counts["drawer"], counts["entity"])
    else:
        open_counts = {
            "drawer": capped_count(DrawerLink.objects.filter(status=DrawerLink.Status.OPEN)),
            "entity": capped_count(EntityLink.objects.filter(status=EntityLink.Status.OPEN)),
        }
        counts = _agree(_kind_counts(filters, open_counts), read)
        open_items = _sum(open_counts["drawer"], open_counts["entity"])
    return {
        **counts,
        "open": open_items,
        "decided_today": capped_count(decisions_today),
        "decided_today_by_you": capped_count(decisions_today.filter(actor=user))
        if user.is_authenticated
        else 0,
    }
