"""The queue's filters, parsed from query parameters, and the query of each kind of item they
select."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from dedup.errors import InvalidInput
from dedup.validation import id_of, lookup_form
from palace.models import DrawerLink, EntityLink
from palace.name_search import any_column_among, entity_ids_named
from review.models import Proposal

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
BY_TIME = ("newest", "oldest")
DESCENDING = ("similarity", "newest")


class QueueStatus(enum.StrEnum):
    """Which items the queue shows: undecided ones, decided ones, or both."""

    OPEN = "open"
    DECIDED = "decided"
    ALL = "all"


STATUSES = tuple(QueueStatus)
# Both link models name their undecided state alike.
LINK_OPEN = DrawerLink.Status.OPEN


@dataclass(frozen=True)
class QueueFilters:
    type: str = ""  # "drawer", "entity" or both; "cluster": linked groups (selectors.clusters)
    rule: str = ""  # exact, normalized, near (drawer links); typo, possible (entity links)
    wing: str = ""
    room: str = ""
    kind: str = ""  # entity kind
    min_similarity: float | None = None
    max_similarity: float | None = None
    status: str = QueueStatus.OPEN
    q: str = ""
    order: str = "similarity"
    run: int | None = None  # a sweep: the queue shows that run's proposals

    @classmethod
    def from_params(cls, params: Mapping) -> QueueFilters:
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

        def choice(name: str, allowed: tuple[str, ...], default: str = "") -> str:
            value = (params.get(name) or default).strip()
            if value and value not in allowed:
                raise InvalidInput(f"{name} must be one of: {', '.join(allowed)}.")
            return value

        return cls(
            type=choice("type", ("drawer", "entity", "cluster")),
            rule=choice("rule", DRAWER_RULES + ENTITY_RULES + PROPOSAL_RULES),
            wing=(params.get("wing") or "").strip(),
            room=(params.get("room") or "").strip(),
            kind=(params.get("kind") or "").strip(),
            min_similarity=number("min_similarity"),
            max_similarity=number("max_similarity"),
            status=choice("status", STATUSES, QueueStatus.OPEN),
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


def run_id(raw: str | None) -> int | None:
    raw = (raw or "").strip()
    if not raw:
        return None
    run = id_of(raw)
    if not run:  # no number, or 0: a sweep's id is 1 or more
        raise InvalidInput("run must be a sweep's number.", code="invalid_id")
    return run


def proposals(filters: QueueFilters) -> QuerySet[Proposal]:
    """A sweep's proposals in quarantine; "open" means not judged yet."""
    queryset = Proposal.objects.filter(run_id=filters.run)
    if filters.status == QueueStatus.OPEN:
        queryset = queryset.filter(verdict="", status=Proposal.Status.PROPOSED)
    elif filters.status == QueueStatus.DECIDED:
        queryset = queryset.exclude(verdict="", status=Proposal.Status.PROPOSED)
    if filters.rule:
        queryset = queryset.filter(tier=filters.rule)
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
    if filters.status == QueueStatus.OPEN:
        queryset = queryset.filter(status=LINK_OPEN)
    elif filters.status == QueueStatus.DECIDED:
        queryset = queryset.exclude(status=LINK_OPEN)
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
        queryset = queryset.filter(newer__room__wing__name__iexact=lookup_form(filters.wing))
    if filters.room:
        queryset = queryset.filter(newer__room__name=lookup_form(filters.room))
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
        named = entity_ids_named(filters.q)  # a rare text, from the names' trigram index
        if named is None:
            queryset = queryset.filter(
                Q(newer__name__icontains=filters.q) | Q(older__name__icontains=filters.q)
            )
        else:
            queryset = queryset.filter(any_column_among(("newer_id", "older_id"), named))
    return queryset
