"""Candidate queries: which stored rows might a new drawer or name duplicate?

The database only proposes; `dedup.policy` decides. Each function here is one indexed query, and
per-database details (SQLite FTS5, PostgreSQL full-text search) stay in this module.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection
from django.db.models import Q, QuerySet

from dedup.policy import VAGUE_KIND
from dedup.policy.entities import KEY_LENGTH_BAND
from palace.models import Drawer, Entity, Room

# At most this many drawers come from each lookup, so a write compares a bounded number.
EXACT_CANDIDATES = 10
LEXICAL_CANDIDATES = 60
# The longest query words are split into small groups; a group matches only when all its words
# do (selective, so cheap), and any group a variant left intact finds its original. Pairs keep
# each AND cheap; four groups survive up to three broken words.
LEXICAL_GROUP_SIZE = 3
LEXICAL_GROUPS = 4
# Function words match half a room and find nothing: never worth a lexical query.
STOP_WORDS = frozenset(
    (
        "about after also and any are because been before being both but can could did does "
        "doing each for from had has have her here him his how into its just more most must "
        "not now off only other our out over same she should some such than that the their "
        "them then there these they this those through too under until very was were what "
        "when where which while who why will with would you your"
    ).split(" ")
)

_CANDIDATE_FIELDS = ("id", "uuid", "content_hash", "normalized_content", "fingerprint")
_SELECT = ", ".join(f"d.{field}" for field in _CANDIDATE_FIELDS)


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


def same_text(scope: Scope, content_hash: str, fingerprint: str | None) -> list[Candidate]:
    """Current drawers of the scope with the same bytes or the same normalised text, oldest
    first: two lookups on the partial indexes, in one round trip. (An OR of the two would make
    SQLite scan the room.)"""
    return _candidates(*_same_text_sql(scope, content_hash, fingerprint))


def _same_text_sql(scope: Scope, content_hash: str, fingerprint: str | None) -> tuple[str, list]:
    where, params = _scope_sql(scope, "d")
    sql = f"SELECT {_SELECT} FROM palace_drawer d WHERE {where} AND d.content_hash = %s"
    all_params = [*params, content_hash]
    if fingerprint is not None:
        sql += f" UNION SELECT {_SELECT} FROM palace_drawer d WHERE {where} AND d.fingerprint = %s"
        all_params += [*params, fingerprint]
    return f"SELECT * FROM ({sql}) u ORDER BY 1 LIMIT %s", [*all_params, 2 * EXACT_CANDIDATES]


def same_hash(scope: Scope, content_hash: str) -> list[Candidate]:
    """Current drawers of the scope with the very same bytes, oldest first."""
    return same_text(scope, content_hash, None)[:EXACT_CANDIDATES]


def same_fingerprint(scope: Scope, fingerprint: str | None) -> list[Candidate]:
    """Current drawers of the scope with the same normalised text, oldest first."""
    if fingerprint is None:
        return []
    where, params = _scope_sql(scope, "d")
    sql = f"SELECT {_SELECT} FROM palace_drawer d WHERE {where} AND d.fingerprint = %s"
    return _candidates(f"{sql} ORDER BY 1 LIMIT %s", [*params, fingerprint, EXACT_CANDIDATES])


def _candidates(sql: str, params: list) -> list[Candidate]:
    """Run a candidate query; raw SQL because this is the hot path of every write, where the
    ORM's own cost would be most of the query's."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [_candidate(row) for row in rows]


def _candidate(row) -> Candidate:
    return Candidate(*_uuid_column(row))


@dataclass(frozen=True, slots=True)
class Candidate:
    """What a comparison needs of a stored drawer; lighter than a model instance, since most
    candidates are only compared and dropped."""

    id: int
    uuid: uuid.UUID
    content_hash: str
    normalized_content: str
    fingerprint: str | None


@dataclass(frozen=True, slots=True)
class Found:
    same: list[Candidate]  # same bytes or same normalised text, oldest first
    lexical: list[Candidate]  # sharing a group of rare words, newest first


def for_text(
    scope: Scope, content_hash: str, fingerprint: str | None, words: Sequence[str]
) -> Found:
    """Every candidate a write needs, in one round trip: the hash and fingerprint lookups and,
    when there are words to query, the lexical one. Each part keeps its own limit."""
    same_sql, same_params = _same_text_sql(scope, content_hash, fingerprint)
    groups = lexical_groups(words)
    if not groups:
        return Found(_candidates(same_sql, same_params), [])
    lexical_sql, lexical_params = _lexical_sql(scope, groups, LEXICAL_CANDIDATES)
    sql = f"SELECT 0, s.* FROM ({same_sql}) s UNION ALL SELECT 1, x.* FROM ({lexical_sql}) x"
    with connection.cursor() as cursor:
        cursor.execute(sql, [*same_params, *lexical_params])
        rows = cursor.fetchall()
    found = Found([], [])
    for part, *row in rows:
        (found.lexical if part else found.same).append(_candidate(row))
    return found


def lexical_words(words: Sequence[str]) -> list[str]:
    return [word for word in words if word not in STOP_WORDS]


def lexical_groups(words: Sequence[str]) -> list[list[str]]:
    """Split the longest words into small groups: a typo breaks one word, so one group."""
    chosen = lexical_words(words)[: LEXICAL_GROUP_SIZE * LEXICAL_GROUPS]
    if len(chosen) <= LEXICAL_GROUP_SIZE:
        return [[word] for word in chosen]
    count = -(-len(chosen) // LEXICAL_GROUP_SIZE)
    return [chosen[i::count] for i in range(count)]


def lexical(
    scope: Scope, words: Sequence[str], *, limit: int = LEXICAL_CANDIDATES
) -> list[Candidate]:
    """Current drawers of the scope holding every word of at least one group, those matching
    the most groups first, then the newest.

    Not ranked by bm25 or ts_rank: those cost more than the match itself (ts_rank re-parses every
    matching row). Counting the groups a drawer matches is nearly free and is what tells a
    variant's original from a chance match.
    """
    groups = lexical_groups(words)
    if not groups:
        return []
    return _candidates(*_lexical_sql(scope, groups, limit))


def _lexical_sql(scope: Scope, groups: list[list[str]], limit: int) -> tuple[str, list]:
    if connection.vendor == "postgresql":
        return _lexical_postgresql(scope, groups, limit)
    if connection.vendor == "sqlite":
        return _lexical_sqlite(scope, groups, limit)
    raise NotImplementedError(connection.vendor)  # pragma: no cover


def _uuid_column(row: tuple) -> tuple:
    # SQLite hands back the uuid column as hex text, PostgreSQL as a UUID.
    drawer_id, public_id, *rest = row
    return (
        drawer_id,
        public_id if isinstance(public_id, uuid.UUID) else uuid.UUID(public_id),
        *rest,
    )


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


def _lexical_sqlite(scope: Scope, groups: list[list[str]], limit: int) -> tuple[str, list]:
    # Words are normalised (letters and digits only); quoting keeps FTS5 from reading any as an
    # operator such as AND or NEAR.
    matches = [" AND ".join(f'"{word}"' for word in group) for group in groups]
    per_group = " UNION ALL ".join(
        "SELECT rowid AS id FROM palace_drawer_fts WHERE palace_drawer_fts MATCH %s"
        for _ in matches
    )
    return _ranked_by_groups(scope, per_group, matches, limit)


# The expression must be the one the GIN index was built on (migration 0002).
PG_TSVECTOR = "to_tsvector('simple'::regconfig, left(d.normalized_content, 100000))"


def _lexical_postgresql(scope: Scope, groups: list[list[str]], limit: int) -> tuple[str, list]:
    queries = [" & ".join(f"'{word}'" for word in group) for group in groups]
    per_group = " UNION ALL ".join(
        f"SELECT d.id FROM palace_drawer d WHERE {PG_TSVECTOR} @@ "
        "to_tsquery('simple'::regconfig, %s) AND d.valid_to IS NULL"
        for _ in queries
    )
    return _ranked_by_groups(scope, per_group, queries, limit)


def _ranked_by_groups(scope: Scope, per_group: str, params: list, limit: int) -> tuple[str, list]:
    """Drawers matching the most groups first, then the newest. A variant's original matches
    every group its typos left intact; a chance match usually shares one group."""
    where, scope_params = _scope_sql(scope, "d")
    sql = (
        f"SELECT {_SELECT} FROM palace_drawer d JOIN "
        f"(SELECT g.id, COUNT(*) AS hits FROM ({per_group}) g GROUP BY g.id) m ON m.id = d.id "
        f"WHERE {where} ORDER BY m.hits DESC, d.id DESC LIMIT %s"
    )
    return sql, [*params, *scope_params, limit]


def entities_matching(*, kind: str, name: str, key: str) -> QuerySet[Entity]:
    """Entities with this exact name, this key, or an alias with this key (indexed lookups)."""
    queryset = Entity.objects.filter(Q(name=name) | Q(key=key) | Q(alias_set__key=key))
    if kind != VAGUE_KIND:
        queryset = queryset.filter(kind=kind)
    return queryset.distinct().prefetch_related("alias_set")


def entities_in_key_band(*, kind: str, key_length: int) -> QuerySet[Entity]:
    """Entities whose key length is within two of the name's: only they can be two edits away."""
    # A redirected entity answers through its canonical one and is never proposed itself.
    queryset = Entity.objects.filter(
        key_length__gte=key_length - KEY_LENGTH_BAND,
        key_length__lte=key_length + KEY_LENGTH_BAND,
        redirect_to__isnull=True,
    )
    if kind != VAGUE_KIND:
        queryset = queryset.filter(kind=kind)
    return queryset.only("id", "name", "kind", "key", "redirect_to")
