"""Reads. Each returns a queryset or rows shaped for one screen or endpoint, with the joins it
needs done up front, so no caller loops into N+1 queries."""

from __future__ import annotations

import enum
import re
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, cast

from django.db import connection
from django.db.models import (
    Count,
    DateTimeField,
    F,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce

from palace import fulltext, name_search
from palace.models import (
    Drawer,
    DrawerLink,
    Entity,
    EntityAlias,
    EntityLink,
    Import,
    Mention,
    Room,
    Wing,
)
from palace.models.entities import mentions_in

# An id as the API writes it, in either case (RFC 9562 reads hex digits so): Python's
# `uuid.UUID` also reads braces, a `urn:uuid:` prefix and 32 digits without hyphens, which
# made every object answer to five spellings of its id.
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def parse_uuid(value: object) -> uuid.UUID | None:
    """An id written as the API writes ids (`_UUID`), or None."""
    if not isinstance(value, str) or not _UUID.fullmatch(value):
        return None
    return uuid.UUID(value)


def drawers_with_place() -> QuerySet[Drawer]:
    return Drawer.objects.select_related("room__wing", "superseded_by")


def import_drawers(imported: Import) -> QuerySet[Any]:
    """The join rows of an import's drawers, to be paged by `drawer_id` on the join table's own
    (import, drawer) index; `drawers_in_order` then reads the page's drawers. Joined to the
    drawers in one query, PostgreSQL merged the two tables in id order and read every drawer
    before the page (30 ms half-way into an import of 100,000, and growing with it; 3 ms at
    either end)."""
    return Import.drawers.through.objects.filter(import_id=imported.pk)


def import_links(imported: Import) -> QuerySet[Any]:
    """The join rows of an import's links, to be paged by `drawerlink_id`."""
    return Import.links.through.objects.filter(import_id=imported.pk)


def drawers_in_order(ids: Sequence[int]) -> list[Drawer]:
    found = drawers_with_place().in_bulk(ids)
    return [found[pk] for pk in ids if pk in found]


def links_in_order(ids: Sequence[int]) -> list[DrawerLink]:
    found = DrawerLink.objects.select_related("newer", "older").in_bulk(ids)
    return [found[pk] for pk in ids if pk in found]


def drawer_by_uuid(drawer_id: uuid.UUID) -> Drawer | None:
    return drawers_with_place().filter(uuid=drawer_id).first()


# A chain of supersessions is followed this far at most (none is made so long: a guard only).
CHAIN_MAX = 1000


def drawers_standing_for(drawers: Collection[Drawer]) -> dict[int, uuid.UUID]:
    """The current drawer that stands for each drawer no longer current, by its id: the end of
    its `superseded_by` chain. A drawer merged into one merged away since (C into B, then B into
    A) stands for A, as does a fact superseded twice; a chain ending in a drawer retired without
    a successor stands for none (left out). One query for all of them, and none for drawers
    still current, which stand for themselves."""
    starts = {d.pk: d.superseded_by_id for d in drawers if d.valid_to is not None}
    starts = {pk: next_id for pk, next_id in starts.items() if next_id is not None}
    if not starts:
        return {}
    table = Drawer._meta.db_table
    marks = ", ".join(["(%s, %s)"] * len(starts))
    sql = (
        f"WITH RECURSIVE starts(start, next) AS (VALUES {marks}), "
        "chain(start, id, next, depth) AS ("
        f" SELECT s.start, d.id, d.superseded_by_id, 1 FROM starts s JOIN {table} d"
        " ON d.id = s.next"
        " UNION ALL"
        f" SELECT c.start, d.id, d.superseded_by_id, c.depth + 1 FROM chain c JOIN {table} d"
        " ON d.id = c.next WHERE c.depth < %s"
        f") SELECT c.start, d.uuid FROM chain c JOIN {table} d ON d.id = c.id"
        " WHERE d.valid_to IS NULL"
    )
    params = [value for pair in starts.items() for value in pair] + [CHAIN_MAX]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return {start: uuid.UUID(str(public_id)) for start, public_id in rows}


def wing_exists(name: str) -> bool:
    return Wing.objects.filter(name=name).exists()


def room_by_names(*, wing: str, room: str) -> Room | None:
    return Room.objects.select_related("wing").filter(wing__name=wing, name=room).first()


def wings_with_rooms() -> QuerySet[Wing]:
    rooms = Room.objects.annotate(
        drawer_count=Count("drawers", filter=Q(drawers__valid_to__isnull=True))
    ).order_by("name")
    return Wing.objects.prefetch_related(Prefetch("rooms", queryset=rooms)).order_by("name")


def room_drawers(room: Room, *, include_superseded: bool = False) -> QuerySet[Drawer]:
    queryset = drawers_with_place().filter(room=room)
    if not include_superseded:
        queryset = queryset.filter(valid_to__isnull=True)
    return queryset.order_by("-id")


class Side(enum.StrEnum):
    """Which end of a link the other record is at, seen from the record asked about."""

    OLDER = "older"
    NEWER = "newer"


@dataclass(frozen=True)
class SimilarDrawer:
    link: DrawerLink
    drawer: Drawer
    side: Side


def drawer_similar(drawer: Drawer) -> list[SimilarDrawer]:
    """The drawer's similar_to links from both ends, closest first (then oldest link first)."""
    links = DrawerLink.objects.filter(Q(newer=drawer) | Q(older=drawer)).select_related(
        "newer__room__wing", "older__room__wing", "newer__superseded_by", "older__superseded_by"
    )
    similar = [
        SimilarDrawer(link, link.older, Side.OLDER)
        if link.newer_id == drawer.id
        else SimilarDrawer(link, link.newer, Side.NEWER)
        for link in links
    ]
    similar.sort(key=lambda s: (-s.link.similarity, s.link.id))
    return similar


def links_to_older(link_ids: list[int]) -> list[SimilarDrawer]:
    """Links just recorded by a write, seen from the new drawer, strongest first."""
    if not link_ids:
        return []
    links = DrawerLink.objects.filter(pk__in=link_ids).select_related("older__room__wing")
    order = {pk: position for position, pk in enumerate(link_ids)}
    return [
        SimilarDrawer(link, link.older, Side.OLDER)
        for link in sorted(links, key=lambda found: order[found.pk])
    ]


def entities_with_aliases(wings: Collection[str] | None = None) -> QuerySet[Entity]:
    """The entities a key reaching `wings` (None: every wing) is told of (`visible_to`), with
    their aliases, and the entities merged into them (whose names and aliases the canonical
    entity answers for), and their mentions counted in those wings (as its mentions list holds
    them). To a key of some wings, an entity's `redirect_to` is read only where it may read that
    entity too (`redirect_seen`): a curator may settle it into one no drawer of its wings names;
    and
    when the palace first recorded the entity is not read (`created_seen` null): that may be
    another wing's fact (a name one of its drawers gave first)."""
    aliases = Prefetch("alias_set", queryset=EntityAlias.objects.order_by("id"))
    merged = Entity.objects.filter(redirect_kind=Entity.Redirect.MERGE).order_by("id")
    queryset = (
        Entity.objects.visible_to(wings)
        .select_related("redirect_to")
        .prefetch_related(
            aliases,
            Prefetch(
                "redirected_from", queryset=merged.prefetch_related(aliases), to_attr="merged"
            ),
        )
        .annotate(mention_count=mention_count(wings))
    )
    if wings is None:
        return queryset.annotate(created_seen=F("created_at"))
    return queryset.annotate(
        # A scalar subquery, one probe a row read: PostgreSQL hashed an EXISTS here, reading
        # every mention of the wings for a page (0.1 s at 100,000 of them).
        redirect_seen=Subquery(
            mentions_in(wings).filter(entity=OuterRef("redirect_to")).values("pk")[:1]
        ),
        created_seen=Value(None, output_field=DateTimeField()),
    )


def mention_count(wings: Collection[str] | None = None) -> Coalesce:
    """An entity's mentions in `wings` (None: every wing), counted for each entity read (one
    search of the mentions' entity index). A count over a join needs a GROUP BY of every entity
    the filter matches before a page takes its few: 1.3 s for a page of one kind at 1,000,000
    entities on SQLite."""
    counted = (
        mentions_in(wings)
        .filter(entity=OuterRef("pk"))
        .order_by()
        .values("entity")
        .annotate(count=Count("pk"))
        .values("count")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def served_aliases(entity: Entity) -> list[str]:
    """Every spelling an entity answers for: its aliases, then each merged entity's name and
    aliases, in order, without repeats (needs `entities_with_aliases`)."""
    spellings = [alias.alias for alias in entity.alias_set.all()]
    for merged in getattr(entity, "merged", []):
        spellings += [merged.name, *(alias.alias for alias in merged.alias_set.all())]
    return [s for i, s in enumerate(spellings) if s != entity.name and s not in spellings[:i]]


def entity_by_uuid(entity_id: uuid.UUID, wings: Collection[str] | None = None) -> Entity | None:
    """The entity, if a key reaching `wings` (None: every wing) is told of it."""
    return entities_with_aliases(wings).filter(uuid=entity_id).first()


def entities_search(
    *, kind: str | None = None, name: str | None = None, wings: Collection[str] | None = None
) -> QuerySet[Entity]:
    queryset = entities_with_aliases(wings)
    if kind:
        queryset = queryset.filter(kind=kind.strip().lower())  # kinds are kept lowercase
    if name:
        queryset = queryset.filter(name_search.entities_named_like(name))
    return queryset.order_by("id")


def entity_mentions(entity: Entity, wings: Collection[str] | None = None) -> QuerySet[Mention]:
    """The entity's mentions, and those of the entities merged into it, in `wings` (None: in
    every wing)."""
    # The entities as a subquery (the primary key, or the redirects' index), so the mentions are
    # read by their entity index: an OR across the join read every mention.
    answered = Entity.objects.filter(
        Q(pk=entity.pk) | Q(redirect_to=entity, redirect_kind=Entity.Redirect.MERGE)
    ).values("pk")
    return (
        mentions_in(wings)
        .filter(entity__in=answered)
        .select_related("drawer__room__wing", "drawer__superseded_by")
        .order_by("id")
    )


@dataclass(frozen=True)
class EntityCandidateLink:
    link: EntityLink
    entity: Entity
    side: Side


def entity_candidates(
    entity: Entity, wings: Collection[str] | None = None
) -> list[EntityCandidateLink]:
    """The entity's possibly_same_as links from both ends, closest first, to the entities a key
    reaching `wings` (None: every wing) is told of: the other side is read by
    `entities_with_aliases(wings)`, which leaves out the others (a link's few sides, each probed;
    filtering the links by an OR of the two sides' visibility hashed every mention of the
    wings)."""
    related = entities_with_aliases(wings)
    links = EntityLink.objects.filter(Q(newer=entity) | Q(older=entity)).prefetch_related(
        Prefetch("newer", queryset=related, to_attr="newer_seen"),
        Prefetch("older", queryset=related, to_attr="older_seen"),
    )
    found = []
    for link in links:
        side = Side.OLDER if link.newer_id == entity.id else Side.NEWER
        # A forward relation's Prefetch sets the one entity, or None if the queryset left it out.
        other = cast(Entity | None, getattr(link, f"{side}_seen"))
        if other is not None:
            found.append(EntityCandidateLink(link, other, side))
    found.sort(key=lambda c: (-c.link.similarity, c.link.id))
    return found


@dataclass(frozen=True)
class SearchHit:
    """A drawer a search found, with how many of the query's word groups it holds."""

    drawer: Drawer
    matched: int


def drawers_matching(
    *,
    groups: Sequence[Sequence[str]],
    wings: Collection[str] | None = None,
    wing: str | None = None,
    room: str | None = None,
    agent: str | None = None,
    after: tuple[int, int] | None = None,
    limit: int,
) -> list[SearchHit]:
    """Current drawers holding every word of at least one group (words as `normalize_text`
    writes them), those holding the most groups first, then the newest; within `wings` (None:
    every wing) and the wing, room and agent given. `after` is the (matched, id) of the last hit
    of the previous page. Two queries, whatever the number of hits: the ranked ids, then the
    drawers with their places."""
    if not groups:
        return []
    sql, params = _matching_sql(groups, wings, wing, room, agent, after, limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        ranked = cursor.fetchall()
    drawers = drawers_with_place().in_bulk([pk for pk, _ in ranked])
    return [SearchHit(drawers[pk], matched) for pk, matched in ranked if pk in drawers]


def _matching_sql(
    groups: Sequence[Sequence[str]],
    wings: Collection[str] | None,
    wing: str | None,
    room: str | None,
    agent: str | None,
    after: tuple[int, int] | None,
    limit: int,
) -> tuple[str, list[str | int]]:
    # One full-text lookup per group (an index scan each), counted per drawer: each word's terms
    # in any room, by prefix (palace/fulltext.py).
    if connection.vendor == "postgresql":
        one_group = (
            f"SELECT m.id FROM {Drawer._meta.db_table} m WHERE "
            f"{fulltext.postgresql_document('m')} @@ "
            f"{fulltext.postgresql_query('%s')} AND m.valid_to IS NULL"
        )
        matches = [fulltext.postgresql_match(list(group)) for group in groups]
    else:
        one_group = "SELECT rowid AS id FROM palace_drawer_fts WHERE palace_drawer_fts MATCH %s"
        matches = [fulltext.sqlite_match(list(group)) for group in groups]
    clauses: list[str] = ["d.valid_to IS NULL"]
    params: list[str | int] = [*matches]
    for column, value in (("w.name", wing), ("r.name", room), ("d.agent", agent)):
        if value is not None:
            clauses.append(f"{column} = %s")
            params.append(value)
    if wings is not None:
        reached = sorted(wings)
        clauses.append(f"w.name IN ({', '.join(['%s'] * len(reached))})" if reached else "1 = 0")
        params += reached
    if after is not None:
        clauses.append("(g.matched < %s OR (g.matched = %s AND d.id < %s))")
        params += [after[0], after[0], after[1]]
    sql = (
        f"SELECT d.id, g.matched FROM (SELECT u.id, COUNT(*) AS matched FROM "
        f"({' UNION ALL '.join([one_group] * len(matches))}) u GROUP BY u.id) g "
        f"JOIN {Drawer._meta.db_table} d ON d.id = g.id "
        f"JOIN {Room._meta.db_table} r ON r.id = d.room_id "
        f"JOIN {Wing._meta.db_table} w ON w.id = r.wing_id "
        f"WHERE {' AND '.join(clauses)} ORDER BY g.matched DESC, d.id DESC LIMIT %s"
    )
    return sql, [*params, limit]
