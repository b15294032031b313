"""Clusters: the connected components of the open links, so that five restatements of one fact
(or `Ada`, `Ada L.`, `Ada Lovelace`, `A. Lovelace`) are reviewed as one item, not C(n,2) pairs.

Drawer links never leave a room, so a drawer cluster lies in one room; entity links are grouped
by the kind of their newer entity. A cluster is named by its smallest open link ("d12", "e7"):
any open link of the cluster reaches it. A cluster has at least three members (two are a pair,
already a queue item) and shows at most `MAX_MEMBERS` of them, the ones nearest the oldest
member, and says so.

Every read here is a constant number of queries: the links of a scope in one query (ids only),
the components in Python, then the members and the shown links in one query each.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any

from dedup.policy import normalize_text
from dedup.policy.merge_gates import Differences, name_differences, text_differences
from palace.models import Drawer, DrawerLink, Entity, EntityLink
from review import diff
from review.diff import Segment
from review.items import ItemKind, ItemRef
from review.selectors.filters import (
    DRAWER_RULES,
    ENTITY_RULES,
    QueueFilters,
    QueueStatus,
    drawer_links,
    entity_links,
)

MAX_MEMBERS = 50  # members shown (and decided) per cluster
MAX_CLUSTERS = 50  # clusters listed per page of the queue
PREVIEWED = 3  # members whose texts the list shows
Edge = tuple[int, int, int]  # link id, older id, newer id


def components(edges: Iterable[Edge]) -> list[list[Edge]]:
    """The edges grouped by connected component (union-find with path halving). Hand-written:
    ten lines, where a graph library would be a dependency for one function."""
    parent: dict[int, int] = {}

    def root(node: int) -> int:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    edges = list(edges)
    for _, older, newer in edges:
        parent[root(older)] = root(newer)
    grouped: dict[int, list[Edge]] = defaultdict(list)
    for edge in edges:
        grouped[root(edge[1])].append(edge)
    return list(grouped.values())


def beyond_pairs(edges: Iterable[Edge]) -> list[Edge]:
    """The edges that touch a member linked more than once: an edge whose two sides have no
    other link is a lone pair, never part of a cluster. Counting first (in C, by `Counter`) spares
    the union-find the pairs, which are most of the open links."""
    edges = list(edges)
    degree = Counter(chain.from_iterable((older, newer) for _, older, newer in edges))
    return [edge for edge in edges if degree[edge[1]] > 1 or degree[edge[2]] > 1]


def shown_members(edges: list[Edge], limit: int = MAX_MEMBERS) -> list[int]:
    """At most `limit` members, breadth first from the oldest (the smallest id), so the members
    shown stay connected."""
    adjacent: dict[int, set[int]] = defaultdict(set)
    for _, older, newer in edges:
        adjacent[older].add(newer)
        adjacent[newer].add(older)
    start = min(adjacent)
    seen, queue = [start], deque([start])
    while queue and len(seen) < limit:
        for other in sorted(adjacent[queue.popleft()]):
            if other not in seen and len(seen) < limit:
                seen.append(other)
                queue.append(other)
    return sorted(seen)


@dataclass
class Cluster:
    """One cluster as the queue lists it, and the base of its item page."""

    ref: ItemRef  # its smallest open link
    scope: str  # the room ("wing/room") or the entity kind
    member_ids: list[int]  # shown members, oldest first
    size: int  # every member, shown or not
    edges: list[Edge]  # open links among the shown members
    members: list[Any] = field(default_factory=list)  # Drawer or Entity rows, oldest first

    @property
    def id(self) -> str:
        return str(self.ref)

    @property
    def is_drawer(self) -> bool:
        return self.ref.is_drawer

    @property
    def truncated(self) -> bool:
        return self.size > len(self.member_ids)

    @property
    def link_ids(self) -> list[int]:
        return sorted(pk for pk, _, _ in self.edges)

    @property
    def link_refs(self) -> list[str]:
        return [str(ItemRef(self.ref.kind, pk)) for pk in self.link_ids]

    @property
    def previews(self) -> list[str]:
        """The first PREVIEWED members' texts (or names) for the list, each cut around where it
        first differs from the oldest's (`diff.excerpt`), so members alike in their first words
        do not look the same."""
        shown = [_text(member) for member in self.members[:PREVIEWED]]
        return [
            diff.excerpt(text, shown[1] if n == 0 else shown[0]) for n, text in enumerate(shown)
        ]


def _cluster(kind: ItemKind, edges: list[Edge], scope: str) -> Cluster:
    members = {node for _, older, newer in edges for node in (older, newer)}
    shown = shown_members(edges)
    kept = set(shown)
    within = sorted(e for e in edges if e[1] in kept and e[2] in kept)
    return Cluster(ItemRef(kind, min(e[0] for e in edges)), scope, shown, len(members), within)


def _open(filters: QueueFilters) -> QueueFilters:
    return replace(filters, status=QueueStatus.OPEN, type="")


def _drawer_clusters(filters: QueueFilters) -> list[Cluster]:
    rows = drawer_links(_open(filters)).values_list("pk", "older_id", "newer_id")
    return [_cluster(ItemKind.DRAWER, c, "") for c in components(beyond_pairs(rows))]


def _entity_clusters(filters: QueueFilters) -> list[Cluster]:
    rows = entity_links(_open(filters)).values_list("pk", "older_id", "newer_id", "newer__kind")
    by_kind: dict[str, list[Edge]] = defaultdict(list)
    for pk, older, newer, kind in rows:
        by_kind[kind].append((pk, older, newer))
    return [
        _cluster(ItemKind.ENTITY, c, kind)
        for kind, edges in by_kind.items()
        for c in components(beyond_pairs(edges))
    ]


@dataclass
class ClusterPage:
    clusters: list[Cluster]
    total: int  # clusters matching the filter
    members: int  # their members


def cluster_page(filters: QueueFilters, *, limit: int = MAX_CLUSTERS) -> ClusterPage:
    """The clusters of the open links the filter selects, largest first, at most `limit` with
    their members (four queries whatever the count)."""
    found: list[Cluster] = []
    if not filters.kind and filters.rule not in ENTITY_RULES:
        found += _drawer_clusters(filters)
    if not (filters.wing or filters.room) and filters.rule not in DRAWER_RULES:
        found += _entity_clusters(filters)
    found.sort(key=lambda c: (-c.size, c.ref.kind.queue_order, c.ref.pk))
    page = found[:limit]
    load_members(page)
    return ClusterPage(page, len(found), sum(c.size for c in found))


def load_members(clusters: list[Cluster]) -> None:
    for kind, model in ((ItemKind.DRAWER, Drawer), (ItemKind.ENTITY, Entity)):
        wanted = [c for c in clusters if c.ref.kind is kind]
        ids = {pk for c in wanted for pk in c.member_ids}
        if not ids:
            continue
        rows: Any = model.objects.filter(pk__in=ids)
        rows = (
            rows.select_related("room__wing")
            if model is Drawer
            else rows.prefetch_related("alias_set")
        )
        by_id = {row.pk: row for row in rows}
        for cluster in wanted:
            cluster.members = [by_id[pk] for pk in cluster.member_ids if pk in by_id]
            if kind is ItemKind.DRAWER and cluster.members:
                cluster.scope = str(cluster.members[0].room)


# --- one cluster -----------------------------------------------------------------------------


def _scope_edges(ref: ItemRef) -> tuple[str, list[Edge]] | None:
    """The scope of the open link `ref` (its room's id, or its entity kind) and every open link
    of that scope; None if `ref` is not an open link."""
    edges: list[Edge]
    if ref.is_drawer:
        room = (
            DrawerLink.objects.filter(pk=ref.pk, status=DrawerLink.Status.OPEN)
            .values_list("newer__room_id", flat=True)
            .first()
        )
        if room is None:
            return None
        # The room's drawers by their index, then their links by the newer side's: no walk of
        # every open link joined to its drawer.
        in_room = Drawer.objects.filter(room_id=room).values("pk")
        drawer_rows = DrawerLink.objects.filter(newer_id__in=in_room, status="open")
        edges = list(drawer_rows.values_list("pk", "older_id", "newer_id"))
        return "", edges
    kind = (
        EntityLink.objects.filter(pk=ref.pk, status=EntityLink.Status.OPEN)
        .values_list("newer__kind", flat=True)
        .first()
    )
    if kind is None:
        return None
    of_kind = Entity.objects.filter(kind=kind).values("pk")
    entity_rows = EntityLink.objects.filter(newer_id__in=of_kind, status="open")
    edges = list(entity_rows.values_list("pk", "older_id", "newer_id"))
    return kind, edges


def cluster_of(ref: ItemRef) -> Cluster | None:
    """The open cluster holding the open link `ref` (None if the link is decided or gone, or
    its component is only a pair), without its member rows: two queries."""
    found = None if ref.is_proposal else _scope_edges(ref)
    if found is None:
        return None
    scope, edges = found
    for component in components(beyond_pairs(edges)):
        if any(pk == ref.pk for pk, _, _ in component):
            return _cluster(ref.kind, component, scope)
    return None  # a lone pair


@dataclass
class MemberView:
    row: Any  # Drawer or Entity
    segments: list[Segment]  # its text (or name) against the canonical member's, inline
    links: list[Any]  # its open links within the cluster
    # What differs from the canonical member's text that a curator is warned of (`_differences`:
    # numbers, dates, names, any other word but a typo): a near miss more likely than a
    # restatement, so the page leaves it open rather than merged unless the curator says so.
    differences: Differences = field(default_factory=Differences)
    # Its text is the canonical's but for case, punctuation or spacing (`normalize_text`).
    same_words: bool = False

    @property
    def warned(self) -> bool:
        return self.differences.warns


@dataclass
class ClusterDetail:
    cluster: Cluster
    canonical: Any
    members: list[MemberView]
    links: list[Any]  # the open links among the shown members, with their evidence


def _differences(keep: Any, member: Any) -> Differences:
    """A drawer's differences from the canonical's text (`text_differences`); an entity's, in
    numbers alone (`name_differences`)."""
    if member is keep:
        return Differences()
    if isinstance(member, Drawer):
        return text_differences(keep.content, member.content)
    return name_differences(keep.name, member.name)


def _same_words(a: str, b: str) -> bool:
    return a != b and normalize_text(a) == normalize_text(b)


def _text(row: Any) -> str:
    return row.content if isinstance(row, Drawer) else row.name


def cluster_detail(ref: ItemRef, canonical: str | None = None) -> ClusterDetail | None:
    """A cluster with every shown member diffed against the canonical one (the member whose
    uuid is `canonical`, else the oldest), and the links between them as evidence."""
    cluster = cluster_of(ref)
    if cluster is None:
        return None
    load_members([cluster])
    links: list[Any] = list(
        (DrawerLink if ref.is_drawer else EntityLink).objects.filter(pk__in=cluster.link_ids)
    )
    links.sort(key=lambda link: link.pk)
    oldest = min(cluster.members, key=lambda row: (row.created_at, row.pk))
    keep = next((m for m in cluster.members if str(m.uuid) == canonical), oldest)
    views = []
    for member in cluster.members:
        segments = diff.inline(_text(keep), _text(member))
        own = [lk for lk in links if member.pk in (lk.older_id, lk.newer_id)]
        same_words = member is not keep and _same_words(_text(keep), _text(member))
        views.append(MemberView(member, segments, own, _differences(keep, member), same_words))
    return ClusterDetail(cluster, keep, views, links)
