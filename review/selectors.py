"""Reads for the review console: the queue (both kinds of item, filtered, keyset-paginated with a
constant number of queries whatever its size), one item with its evidence, the audit log, and the
detector's measured precision."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from dedup import policy
from dedup.errors import InvalidInput
from palace.models import AuditAction, AuditEntry, DrawerLink, Entity, EntityLink, Mention
from review.diff import differing_numbers, side_by_side
from review.models import Proposal
from review.services import DECISION_PREFIX, REVERT_ACTION, ItemRef, not_reverted

PAGE_SIZE = 25
DRAWER_RULES = ("exact", "normalized", "near")
ENTITY_RULES = ("typo", "possible")
PROPOSAL_RULES = ("alias",)  # and every drawer and entity rule
ORDERS = {
    "similarity": "Most similar first",
    "similarity_asc": "Least similar first",
    "newest": "Newest first",
    "oldest": "Oldest first",
    "uncertain": "Most uncertain first",
}
STATUSES = ("open", "decided", "all")


@dataclass(frozen=True)
class QueueFilters:
    type: str = ""  # "drawer", "entity" or both
    rule: str = ""  # exact, normalized, near (drawer links); typo, possible (entity links)
    wing: str = ""
    room: str = ""
    kind: str = ""  # entity kind
    min_similarity: float | None = None
    max_similarity: float | None = None
    status: str = "open"
    q: str = ""
    order: str = "similarity"
    run: int | None = None  # a sweep: the queue shows that run's proposals

    @classmethod
    def from_params(cls, params) -> QueueFilters:
        """Parse query parameters; anything malformed is a clear error, not a silent default."""

        def number(name: str) -> float | None:
            raw = (params.get(name) or "").strip()
            if not raw:
                return None
            try:
                value = float(raw)
            except ValueError:
                raise InvalidInput(f"{name} must be a number from 0 to 1.") from None
            if not 0 <= value <= 1:
                raise InvalidInput(f"{name} must be a number from 0 to 1.")
            return value

        def choice(name: str, allowed, default: str = "") -> str:
            value = (params.get(name) or default).strip()
            if value and value not in allowed:
                raise InvalidInput(f"{name} must be one of: {', '.join(allowed)}.")
            return value

        return cls(
            type=choice("type", ("drawer", "entity")),
            rule=choice("rule", DRAWER_RULES + ENTITY_RULES + PROPOSAL_RULES),
            wing=(params.get("wing") or "").strip(),
            room=(params.get("room") or "").strip(),
            kind=(params.get("kind") or "").strip(),
            min_similarity=number("min_similarity"),
            max_similarity=number("max_similarity"),
            status=choice("status", STATUSES, "open"),
            q=(params.get("q") or "").strip()[:200],
            order=choice("order", tuple(ORDERS), "similarity"),
            run=run_id(params.get("run")),
        )

    @property
    def includes_drawers(self) -> bool:
        return (
            self.run is None
            and self.type in ("", "drawer")
            and self.rule not in ENTITY_RULES
            and not self.kind
        )

    @property
    def includes_proposals(self) -> bool:
        return self.run is not None

    @property
    def includes_entities(self) -> bool:
        return (
            self.run is None
            and self.type in ("", "entity")
            and self.rule not in DRAWER_RULES
            and not self.wing
            and not self.room
        )


def run_id(raw) -> int | None:
    raw = (raw or "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise InvalidInput("run must be a sweep's number.")
    return int(raw)


def proposals(filters: QueueFilters) -> QuerySet[Proposal]:
    """A sweep's proposals in quarantine; "open" means not judged yet."""
    queryset = Proposal.objects.filter(run_id=filters.run)
    if filters.status == "open":
        queryset = queryset.filter(verdict="", status=Proposal.Status.PROPOSED)
    elif filters.status == "decided":
        queryset = queryset.exclude(verdict="", status=Proposal.Status.PROPOSED)
    if filters.rule:
        queryset = queryset.filter(tier="typo" if filters.rule == "typo" else filters.rule)
    if filters.min_similarity is not None:
        queryset = queryset.filter(score__gte=filters.min_similarity)
    if filters.max_similarity is not None:
        queryset = queryset.filter(score__lte=filters.max_similarity)
    if filters.q:
        queryset = queryset.filter(
            Q(texts__newer__icontains=filters.q) | Q(texts__older__icontains=filters.q)
        )
    return queryset


def _common(queryset: QuerySet, filters: QueueFilters) -> QuerySet:
    if filters.status == "open":
        queryset = queryset.filter(status="open")
    elif filters.status == "decided":
        queryset = queryset.exclude(status="open")
    if filters.min_similarity is not None:
        queryset = queryset.filter(similarity__gte=filters.min_similarity)
    if filters.max_similarity is not None:
        queryset = queryset.filter(similarity__lte=filters.max_similarity)
    return queryset


def drawer_links(filters: QueueFilters) -> QuerySet[DrawerLink]:
    queryset = _common(DrawerLink.objects.all(), filters)
    if filters.rule:
        queryset = queryset.filter(verdict=filters.rule)
    if filters.wing:
        queryset = queryset.filter(newer__room__wing__name=filters.wing)
    if filters.room:
        queryset = queryset.filter(newer__room__name=filters.room)
    if filters.q:
        queryset = queryset.filter(
            Q(newer__content__icontains=filters.q) | Q(older__content__icontains=filters.q)
        )
    return queryset


def entity_links(filters: QueueFilters) -> QuerySet[EntityLink]:
    queryset = _common(EntityLink.objects.all(), filters)
    if filters.rule == "typo":
        queryset = queryset.filter(distance=1)
    elif filters.rule == "possible":
        queryset = queryset.exclude(distance=1)
    if filters.kind:
        queryset = queryset.filter(newer__kind=filters.kind)
    if filters.q:
        queryset = queryset.filter(
            Q(newer__name__icontains=filters.q) | Q(older__name__icontains=filters.q)
        )
    return queryset


@dataclass
class QueueItem:
    ref: ItemRef
    link: DrawerLink | EntityLink
    sort_key: float | str

    @property
    def is_drawer(self) -> bool:
        return self.ref.is_drawer

    @property
    def id(self) -> str:
        return str(self.ref)


@dataclass
class QueuePage:
    items: list[QueueItem]
    next_cursor: str | None
    counts: dict[str, int] = field(default_factory=dict)


def _encode(item: QueueItem) -> str:
    key = item.sort_key.isoformat() if hasattr(item.sort_key, "isoformat") else item.sort_key
    raw = json.dumps([key, item.ref.kind, item.ref.pk]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(cursor: str, order: str):
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        key, kind, pk = json.loads(raw)
        key = datetime.fromisoformat(key) if order in ("newest", "oldest") else float(key)
        if kind not in ("d", "e", "p"):
            raise ValueError(kind)
        return key, kind, int(pk)
    except (ValueError, TypeError, binascii.Error, json.JSONDecodeError):
        raise InvalidInput("Malformed cursor.", code="invalid_cursor") from None


@dataclass(frozen=True)
class _Run:
    """One indexed range of one table, walked in one direction along one column."""

    column: str
    descending: bool
    bound: object = None  # walk past this value (None: from the start)
    side: Q = field(default_factory=Q)


def _runs(order: str, threshold: float, after, similarity: str = "similarity") -> list[_Run]:
    """The index ranges an order reads. "Most uncertain first" (closest to the threshold) is two
    ranges walked outward from the threshold, above it upward and below it downward, so it uses
    the similarity index like the others instead of sorting every open item."""
    if order in ("similarity", "similarity_asc"):
        return [_Run(similarity, order == "similarity", after[0] if after else None)]
    if order in ("newest", "oldest"):
        return [_Run("created_at", order == "newest", after[0] if after else None)]
    above = Q(**{f"{similarity}__gte": threshold})
    below = Q(**{f"{similarity}__lt": threshold})
    if after is None:
        return [_Run(similarity, False, None, above), _Run(similarity, True, None, below)]
    at = after[0]
    distance = abs(at - threshold)
    # The bound is the cursor's own similarity on its side (exact) and its mirror on the other.
    upper = at if at >= threshold else threshold + distance
    lower = at if at < threshold else threshold - distance
    return [_Run(similarity, False, upper, above), _Run(similarity, True, lower, below)]


def _sort_key(order: str, threshold: float, link):
    if order == "uncertain":
        return abs(link.similarity - threshold)
    return link.created_at if order in ("newest", "oldest") else link.similarity


def queue_page(
    filters: QueueFilters, *, cursor: str | None = None, size: int = PAGE_SIZE
) -> QueuePage:
    """One page of the queue: at most `size` items of both kinds in one order.

    Each kind is read by keyset over an index (one range, or two for "most uncertain first"),
    at most size + 1 rows each, and the runs are merged here: the cost does not grow with the
    queue. The order is the sort key, then drawer links before entity links, then the id.
    """
    threshold = settings.CASTELLAN_DEDUP_NEAR_THRESHOLD
    after = _decode(cursor, filters.order) if cursor else None
    sources = []
    if filters.includes_drawers:
        sources.append(
            ("d", drawer_links(filters).select_related("newer__room__wing", "older__room__wing"))
        )
    if filters.includes_entities:
        sources.append(("e", entity_links(filters).select_related("newer", "older")))
    if filters.includes_proposals:
        sources.append(("p", proposals(filters).select_related("run")))

    descending = filters.order in ("similarity", "newest")
    items: list[QueueItem] = []
    for kind, queryset in sources:
        column = "score" if kind == "p" else "similarity"  # a proposal's similarity is its score
        for run in _runs(filters.order, threshold, after, column):
            rows = queryset.filter(run.side)
            if run.bound is not None:
                _, after_kind, after_pk = after
                past = Q(**{f"{run.column}__{'lt' if run.descending else 'gt'}": run.bound})
                same = Q(**{run.column: run.bound})
                # Equal keys: drawer links before entity links, each by id in the order's sense.
                # `within` (<= or >=) is the index range; the rest only breaks ties.
                within = Q(**{f"{run.column}__{'lte' if run.descending else 'gte'}": run.bound})
                if kind == after_kind:
                    tie = Q(pk__lt=after_pk) if descending else Q(pk__gt=after_pk)
                    rows = rows.filter(within & (past | (same & tie)))
                elif kind > after_kind:
                    rows = rows.filter(within)
                else:
                    rows = rows.filter(past)
            direction = "-" if run.descending else ""
            tie_direction = "-" if descending else ""
            rows = rows.order_by(f"{direction}{run.column}", f"{tie_direction}pk")[: size + 1]
            items += [
                QueueItem(ItemRef(kind, link.pk), link, _sort_key(filters.order, threshold, link))
                for link in rows
            ]

    items.sort(key=lambda i: (i.ref.kind, -i.ref.pk if descending else i.ref.pk))
    items.sort(key=lambda i: i.sort_key, reverse=descending)
    page = items[:size]
    if len(items) <= size or not page:
        return QueuePage(page, None)
    last = page[-1]
    # The cursor keeps the raw column value (similarity or time), so bounds stay exact.
    raw = last.link.created_at if filters.order in ("newest", "oldest") else last.link.similarity
    return QueuePage(page, _encode(QueueItem(last.ref, last.link, raw)))


MAX_BULK = 1000


def queue_refs(filters: QueueFilters, *, limit: int = MAX_BULK) -> list[ItemRef]:
    """Every item matching a filter (for "apply to all"), at most `limit`."""
    refs = []
    if filters.includes_drawers:
        refs += [
            ItemRef("d", pk) for pk in drawer_links(filters).values_list("pk", flat=True)[:limit]
        ]
    if filters.includes_proposals:
        refs += [ItemRef("p", pk) for pk in proposals(filters).values_list("pk", flat=True)[:limit]]
    if filters.includes_entities:
        rest = limit - len(refs)
        refs += [
            ItemRef("e", pk) for pk in entity_links(filters).values_list("pk", flat=True)[:rest]
        ]
    return refs


def next_item(filters: QueueFilters, link) -> ItemRef | None:
    """The item after this one in the queue's order (whatever this one's status now)."""
    ref = ItemRef.of(link)
    raw = link.created_at if filters.order in ("newest", "oldest") else link.similarity
    cursor = _encode(QueueItem(ref, link, raw))
    page = queue_page(filters, cursor=cursor, size=1)
    return page.items[0].ref if page.items else None


def queue_counts(filters: QueueFilters, user) -> dict[str, int]:
    """Counts for the current filters, per kind, and the progress line."""
    today = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    decisions_today = AuditEntry.objects.filter(
        action__startswith=DECISION_PREFIX, created_at__gte=today
    ).exclude(action=REVERT_ACTION)
    counts = {
        "drawer": drawer_links(filters).count() if filters.includes_drawers else 0,
        "entity": entity_links(filters).count() if filters.includes_entities else 0,
        "proposal": proposals(filters).count() if filters.includes_proposals else 0,
    }
    if filters == QueueFilters(order=filters.order):  # the default view: its counts are the totals
        open_items = counts["drawer"] + counts["entity"]
    else:
        open_items = (
            DrawerLink.objects.filter(status="open").count()
            + EntityLink.objects.filter(status="open").count()
        )
    return {
        **counts,
        "open": open_items,
        "decided_today": decisions_today.count(),
        "decided_today_by_you": decisions_today.filter(actor=user).count()
        if user.is_authenticated
        else 0,
    }


# --- one item ----------------------------------------------------------------------------------


@dataclass
class DrawerItem:
    ref: ItemRef
    link: DrawerLink
    left: list
    right: list
    numbers_left: list[str]
    numbers_right: list[str]
    other_links: dict[int, list[DrawerLink]]
    mentions: dict[int, list[Mention]]
    last_decision: AuditEntry | None


@dataclass
class EntityItem:
    ref: ItemRef
    link: EntityLink
    distance: int
    samples: dict[int, list[Mention]]
    other_candidates: dict[int, list[EntityLink]]
    last_decision: AuditEntry | None


@dataclass
class ProposalItem:
    ref: ItemRef
    link: Proposal  # named like the links' for the shared templates
    left: list
    right: list
    numbers_left: list[str]
    numbers_right: list[str]
    last_decision: AuditEntry | None


SAMPLE_MENTIONS = 3


def _other_links(link, pair: tuple[int, int]) -> dict[int, list]:
    """The other links of each side of a pair (one query)."""
    others = (
        type(link)
        .objects.filter(Q(newer_id__in=pair) | Q(older_id__in=pair))
        .exclude(pk=link.pk)
        .select_related("newer", "older")
    )
    by_side: dict[int, list] = {pk: [] for pk in pair}
    for other in others:
        for pk in pair:
            if pk in (other.newer_id, other.older_id):
                by_side[pk].append(other)
    return by_side


def item_detail(ref: ItemRef) -> DrawerItem | EntityItem | ProposalItem | None:
    from review.services import last_decision

    if ref.is_proposal:
        proposal = Proposal.objects.select_related("run").filter(pk=ref.pk).first()
        if proposal is None:
            return None
        older, newer = proposal.texts.get("older", ""), proposal.texts.get("newer", "")
        left, right = side_by_side(older, newer)
        numbers_left, numbers_right = differing_numbers(older, newer)
        return ProposalItem(
            ref, proposal, left, right, numbers_left, numbers_right, last_decision(ref)
        )

    if ref.is_drawer:
        link = (
            DrawerLink.objects.select_related(
                "newer__room__wing", "older__room__wing", "decided_by"
            )
            .filter(pk=ref.pk)
            .first()
        )
        if link is None:
            return None
        pair = (link.older_id, link.newer_id)
        other_links = _other_links(link, pair)
        mentions = {pk: [] for pk in pair}
        for mention in Mention.objects.filter(drawer_id__in=pair).select_related("entity"):
            mentions[mention.drawer_id].append(mention)
        left, right = side_by_side(link.older.content, link.newer.content)
        numbers_left, numbers_right = differing_numbers(link.older.content, link.newer.content)
        return DrawerItem(
            ref,
            link,
            left,
            right,
            numbers_left,
            numbers_right,
            other_links,
            mentions,
            last_decision(ref),
        )

    entities = Entity.objects.prefetch_related("alias_set").annotate(
        mention_count=Count("mentions", distinct=True)
    )
    link = EntityLink.objects.select_related("decided_by").filter(pk=ref.pk).first()
    if link is None:
        return None
    by_id = {e.pk: e for e in entities.filter(pk__in=(link.older_id, link.newer_id))}
    link.older, link.newer = by_id[link.older_id], by_id[link.newer_id]
    pair = (link.older_id, link.newer_id)
    # The newest three mentions of each side: one query per side, whatever their numbers.
    samples = {
        pk: list(
            Mention.objects.filter(entity_id=pk)
            .select_related("drawer__room__wing")
            .order_by("-id")[:SAMPLE_MENTIONS]
        )
        for pk in pair
    }
    candidates = _other_links(link, pair)
    distance = policy.edit_distance(link.older.key, link.newer.key)
    return EntityItem(ref, link, distance, samples, candidates, last_decision(ref))


# --- audit log ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditFilters:
    actor: str = ""
    action: str = ""
    item: str = ""
    since: str = ""
    until: str = ""

    @classmethod
    def from_params(cls, params) -> AuditFilters:
        return cls(
            *(
                (params.get(name) or "").strip()
                for name in ("actor", "action", "item", "since", "until")
            )
        )


def audit_entries(filters: AuditFilters) -> QuerySet[AuditEntry]:
    from datetime import date

    queryset = AuditEntry.objects.select_related("actor").order_by("-id")
    if filters.actor:
        queryset = queryset.filter(actor_label=filters.actor)
    if filters.action:
        queryset = queryset.filter(action=filters.action)
    if filters.item:
        queryset = queryset.filter(Q(target_id=filters.item) | Q(data__item=filters.item))
    for name, lookup, shift in (("since", "created_at__gte", 0), ("until", "created_at__lt", 1)):
        raw = getattr(filters, name)
        if raw:
            try:
                day = date.fromisoformat(raw)
            except ValueError:
                raise InvalidInput(f"{name} must be a date like 2026-11-29.") from None
            queryset = queryset.filter(
                **{
                    lookup: timezone.make_aware(
                        timezone.datetime.combine(
                            day + timedelta(days=shift), timezone.datetime.min.time()
                        )
                    )
                }
            )
    return queryset


def reverted_ids(entries) -> set[int]:
    ids = [str(e.pk) for e in entries]
    return {
        int(t)
        for t in AuditEntry.objects.filter(action=REVERT_ACTION, target_id__in=ids).values_list(
            "target_id", flat=True
        )
    }


# --- how good is the detector ------------------------------------------------------------------

BANDS = ((0.0, 0.9), (0.9, 0.95), (0.95, 0.98), (0.98, 1.0), (1.0, 1.01))


def similarity_band(similarity: float) -> str:
    """The band a similarity falls in, as the precision pages and the sweep's sample use it."""
    for low, high in BANDS:
        if low <= similarity < high:
            return f"{low:.2f} to {min(high, 1.0):.2f}" if high <= 1 else "1.00"
    return "1.00"


def precision_stats() -> dict:
    """Per tier and similarity band: how many links were decided, and the share settled as the
    same thing (merge or alias) against those found wrong (delete link). Dismissals count as
    decided but in neither direction."""
    tiers: dict[tuple[str, str], dict[str, int]] = {}

    def add(tier: str, similarity: float, status: str, deleted: bool = False):
        row = tiers.setdefault(
            (tier, similarity_band(similarity)), {"open": 0, "same": 0, "wrong": 0, "dismissed": 0}
        )
        if deleted:
            row["wrong"] += 1
        elif status == "open":
            row["open"] += 1
        elif status in ("merged", "aliased"):
            row["same"] += 1
        else:
            row["dismissed"] += 1

    for verdict, similarity, status in DrawerLink.objects.values_list(
        "verdict", "similarity", "status"
    ):
        add(verdict, similarity, status)
    for distance, similarity, status in EntityLink.objects.values_list(
        "distance", "similarity", "status"
    ):
        add("typo candidate" if distance == 1 else "possible match", similarity, status)
    # Deleted links live on only in the audit log.
    deleted = not_reverted(AuditEntry.objects.filter(action=AuditAction.REVIEW_DELETE_LINK))
    for entry in deleted.only("before"):
        link = entry.before["link"]
        tier = link.get("verdict") or (
            "typo candidate" if link.get("distance") == 1 else "possible match"
        )
        add(tier, link["similarity"], "deleted", deleted=True)

    rows = []
    for (tier, band), row in sorted(tiers.items()):
        judged = row["same"] + row["wrong"]
        rows.append(
            {
                "tier": tier,
                "band": band,
                **row,
                "decided": row["same"] + row["wrong"] + row["dismissed"],
                "precision": round(row["same"] / judged, 3) if judged else None,
            }
        )
    return {"tiers": rows, "queue": queue_history()}


def queue_history(days: int = 14) -> list[dict]:
    """Open items at the end of each of the last days: created up to then, minus decided by then."""
    from bisect import bisect_right

    now = timezone.now()
    created, decided = [], []
    for model in (DrawerLink, EntityLink):
        for created_at, decided_at in model.objects.values_list("created_at", "decided_at"):
            created.append(created_at)
            if decided_at is not None:
                decided.append(decided_at)
    created.sort()
    decided.sort()
    points = []
    for back in range(days - 1, -1, -1):
        moment = now - timedelta(days=back)
        open_then = bisect_right(created, moment) - bisect_right(decided, moment)
        points.append({"date": moment.date().isoformat(), "open": open_then})
    return points
