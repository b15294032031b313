"""Candidate queries: which stored rows might a new drawer or name duplicate?

The database only proposes; `dedup.policy` decides. Each function here is one indexed query, and
per-database details (SQLite FTS5, PostgreSQL full-text search) stay in this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection
from django.db.models import Q, QuerySet

from dedup.policy import VAGUE_KIND
from dedup.policy.entities import KEY_LENGTH_BAND
from palace.models import Drawer, Entity, Room

# At most this many drawers come from each lookup, so a write compares a bounded number.
EXACT_CANDIDATES = 10
LEXICAL_CANDIDATES = 10
# The longest query words are split into groups of this size; a group matches only when all its
# words do (selective, so cheap), and any intact group finds the original of a variant.
LEXICAL_GROUP_SIZE = 3
LEXICAL_GROUPS = 4

_CANDIDATE_FIELDS = ("id", "uuid", "content_hash", "normalized_content", "fingerprint")


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a drawer's duplicates may be: one room, current drawers only, and for a diary only
    the same agent's entries. Scope is part of every query, never a filter applied afterwards."""

    room: Room
    agent: str | None = None
    exclude_id: int | None = None

    def drawers(self) -> QuerySet[Drawer]:
        queryset = Drawer.objects.current().filter(room=self.room)
        if self.agent is not None:
            queryset = queryset.filter(agent=self.agent)
        if self.exclude_id is not None:
            queryset = queryset.exclude(id=self.exclude_id)
        return queryset


def same_hash(scope: Scope, content_hash: str) -> list[Drawer]:
    """Current drawers of the scope with the very same bytes, oldest first."""
    return list(
        scope.drawers()
        .filter(content_hash=content_hash)
        .only(*_CANDIDATE_FIELDS)
        .order_by("id")[:EXACT_CANDIDATES]
    )


def same_fingerprint(scope: Scope, fingerprint: str | None) -> list[Drawer]:
    """Current drawers of the scope with the same normalised text, oldest first."""
    if fingerprint is None:
        return []
    return list(
        scope.drawers()
        .filter(fingerprint=fingerprint)
        .only(*_CANDIDATE_FIELDS)
        .order_by("id")[:EXACT_CANDIDATES]
    )


def lexical_groups(words: Sequence[str]) -> list[list[str]]:
    """Split the longest words into small groups: a typo breaks one word, so one group."""
    chosen = list(words[: LEXICAL_GROUP_SIZE * LEXICAL_GROUPS])
    if len(chosen) <= LEXICAL_GROUP_SIZE:
        return [[word] for word in chosen]
    count = -(-len(chosen) // LEXICAL_GROUP_SIZE)
    return [chosen[i::count] for i in range(count)]


def lexical(scope: Scope, words: Sequence[str], *, limit: int = LEXICAL_CANDIDATES) -> list[Drawer]:
    """Current drawers of the scope that share the rarest words of the text, best ranked first."""
    groups = lexical_groups(words)
    if not groups:
        return []
    if connection.vendor == "postgresql":
        ids = _lexical_postgresql(scope, groups, limit)
    elif connection.vendor == "sqlite":
        ids = _lexical_sqlite(scope, groups, limit)
    else:  # pragma: no cover - only SQLite and PostgreSQL are supported
        raise NotImplementedError(connection.vendor)
    if not ids:
        return []
    by_id = {d.id: d for d in Drawer.objects.filter(id__in=ids).only(*_CANDIDATE_FIELDS)}
    return [by_id[i] for i in ids if i in by_id]


def _scope_sql(scope: Scope, alias: str) -> tuple[str, list]:
    clauses = [f"{alias}.room_id = %s", f"{alias}.valid_to IS NULL"]
    params: list = [scope.room.id]
    if scope.agent is not None:
        clauses.append(f"{alias}.agent = %s")
        params.append(scope.agent)
    if scope.exclude_id is not None:
        clauses.append(f"{alias}.id <> %s")
        params.append(scope.exclude_id)
    return " AND ".join(clauses), params


def _lexical_sqlite(scope: Scope, groups: list[list[str]], limit: int) -> list[int]:
    # Words are normalised (letters and digits only); quoting keeps FTS5 from reading any as an
    # operator such as AND or NEAR.
    match = " OR ".join("(" + " AND ".join(f'"{word}"' for word in group) + ")" for group in groups)
    where, params = _scope_sql(scope, "d")
    sql = (
        "SELECT d.id FROM palace_drawer_fts f JOIN palace_drawer d ON d.id = f.rowid "
        f"WHERE palace_drawer_fts MATCH %s AND {where} ORDER BY f.rank LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [match, *params, limit])
        return [row[0] for row in cursor.fetchall()]


# The expression must be the one the GIN index was built on (migration 0002).
PG_TSVECTOR = "to_tsvector('simple'::regconfig, left(d.normalized_content, 100000))"


def _lexical_postgresql(scope: Scope, groups: list[list[str]], limit: int) -> list[int]:
    query = " | ".join("(" + " & ".join(f"'{word}'" for word in group) + ")" for group in groups)
    where, params = _scope_sql(scope, "d")
    sql = (
        f"SELECT d.id FROM palace_drawer d, to_tsquery('simple'::regconfig, %s) q "
        f"WHERE {PG_TSVECTOR} @@ q AND {where} "
        f"ORDER BY ts_rank({PG_TSVECTOR}, q) DESC, d.id LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [query, *params, limit])
        return [row[0] for row in cursor.fetchall()]


def entities_matching(*, kind: str, name: str, key: str) -> QuerySet[Entity]:
    """Entities with this exact name, this key, or an alias with this key (indexed lookups)."""
    queryset = Entity.objects.filter(Q(name=name) | Q(key=key) | Q(alias_set__key=key))
    if kind != VAGUE_KIND:
        queryset = queryset.filter(kind=kind)
    return queryset.distinct().prefetch_related("alias_set")


def entities_in_key_band(*, kind: str, key_length: int) -> QuerySet[Entity]:
    """Entities whose key length is within two of the name's: only they can be two edits away."""
    queryset = Entity.objects.filter(
        key_length__gte=key_length - KEY_LENGTH_BAND, key_length__lte=key_length + KEY_LENGTH_BAND
    )
    if kind != VAGUE_KIND:
        queryset = queryset.filter(kind=kind)
    return queryset.only("id", "name", "kind", "key")
