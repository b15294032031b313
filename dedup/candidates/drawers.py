"""Candidate queries: which stored rows might a new drawer or name duplicate?

The database only proposes; `dedup.policy` decides. Each function here is one indexed query, and
per-database details (SQLite FTS5, PostgreSQL full-text search) stay in this module.

A write's candidates come in one round trip (`for_text`). On SQLite that is one statement built
here. On PostgreSQL it is a call of the function `castellan_drawer_candidates`
(`POSTGRESQL_FUNCTION`; the migration installing it holds its own copy of the text, and
tests/dedup/test_migrations.py checks the installed function against this one): it takes the
writer's advisory lock, then reads, in one round trip instead of two, planning small statements
(planning the whole one had cost as much as running it).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection
from django.db.models import QuerySet

from dedup import policy
from dedup.candidates.drawer_function import (
    POSTGRESQL_FUNCTION,
    POSTGRESQL_FUNCTION_NAME,
    POSTGRESQL_FUNCTION_REMOVE,
    WORDS_FUNCTION,
    WORDS_FUNCTION_NAME,
    WORDS_FUNCTION_REMOVE,
)
from palace import fulltext
from palace.models import Drawer, Room

# At most this many drawers come from each lookup, so a write compares a bounded number.
EXACT_CANDIDATES = 10
LEXICAL_CANDIDATES = 60
# The query words are split into small groups (dedup/candidates/room_words.py chooses them); a
# group matches only when all its words do (selective, so cheap), and any group a variant left
# intact finds its original. Pairs keep each AND cheap; each is a bounded full-text lookup on
# every write. On realistic corruption (bench/recall.py), five pairs find 99.7% of the pairs
# within reach: the write path asks five, and sweeps (which find what writes missed) six (one
# fewer in a room of 100,000 drawers or more, whose groups hold only words the room holds).
LEXICAL_GROUP_SIZE = 2
LEXICAL_GROUPS = 5
SWEEP_LEXICAL_GROUPS = 6
# Each group's lookup stops at this many matches, the newest first (inside the index on SQLite), so
# a query's work is bounded whatever the room's size. A group that reaches the bound is a common
# one (a room's template words): its matches still count, but after those of the rare groups,
# which are what tell a variant's original from the rest of the room.
GROUP_MATCHES = 64
# Of the drawers matching the groups, this many, ranked, are looked up for their scope and length.
SQLITE_RANKED_MATCHES = 4 * LEXICAL_CANDIDATES
SQLITE_WORDS_ASKED = 200  # `words_in_room`'s words per statement
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


@dataclass(frozen=True, slots=True)
class Candidate:
    """What a comparison needs of a stored drawer; lighter than a model instance, since most
    candidates are only compared and dropped."""

    id: int
    public_id: uuid.UUID | str  # SQLite hands back the uuid column as hex text
    content_hash: str
    normalized_content: str
    fingerprint: str | None

    @property
    def uuid(self) -> uuid.UUID:
        # Parsed only when asked for: most candidates are compared and dropped.
        public_id = self.public_id
        return public_id if isinstance(public_id, uuid.UUID) else uuid.UUID(public_id)


@dataclass(frozen=True, slots=True)
class LengthBand:
    """The normalised lengths a lexical candidate may have: from `low` to `high`, or over
    `any_over`. The policy says which (`policy.near_length_range`); the default is any."""

    low: int = 0
    high: int = 2**62
    any_over: int = 2**62


ANY_LENGTH = LengthBand()


@dataclass(frozen=True, slots=True)
class Found:
    same: list[Candidate]  # same bytes or same normalised text, oldest first
    lexical: list[Candidate]  # sharing a group of rare words, most groups first, then newest


def for_text(
    scope: Scope,
    content_hash: str,
    fingerprint: str | None,
    words: Sequence[str],
    *,
    lock: int | None = None,
    lengths: LengthBand = ANY_LENGTH,
    lexical_limit: int = LEXICAL_CANDIDATES,
    groups: int = LEXICAL_GROUPS,
    word_groups: list[list[str]] | None = None,
) -> Found:
    """Every candidate of a text, in one round trip: the drawers with the same bytes or the same
    normalised text (at most 2 * EXACT_CANDIDATES, oldest first) and, when there are words to
    query, those sharing one of `groups` groups of them with a normalised length in `lengths` (at
    most `lexical_limit`).

    `lock` is an advisory lock key (`dedup.locks.lock_key`) to hold before reading, on
    PostgreSQL; SQLite needs none, its write transactions being serialised from their start.
    `word_groups`, if given, are asked instead of `lexical_groups(words, groups)`. Each group's
    lookup asks its words' terms in the room (`palace.fulltext`), so it reads that room's
    postings only, on both databases."""
    if word_groups is None:
        word_groups = lexical_groups(words, groups)
    if connection.vendor == "postgresql":
        sql, params = _for_text_postgresql(
            scope, content_hash, fingerprint, word_groups, lengths, lexical_limit, lock
        )
    elif connection.vendor == "sqlite":
        sql, params = _for_text_sqlite(
            scope, content_hash, fingerprint, word_groups, lengths, lexical_limit
        )
    else:  # pragma: no cover
        raise NotImplementedError(connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    found = Found([], [])
    for part, *row in rows:
        (found.lexical if part else found.same).append(Candidate(*row))
    return found


def same_hash(scope: Scope, content_hash: str) -> list[Candidate]:
    """Current drawers of the scope with the very same bytes, oldest first."""
    return for_text(scope, content_hash, None, []).same[:EXACT_CANDIDATES]


def same_fingerprint(scope: Scope, fingerprint: str | None) -> list[Candidate]:
    """Current drawers of the scope with the same normalised text, oldest first."""
    if fingerprint is None:
        return []
    return for_text(scope, "", fingerprint, []).same[:EXACT_CANDIDATES]


def lexical(
    scope: Scope,
    words: Sequence[str],
    *,
    limit: int = LEXICAL_CANDIDATES,
    groups: int = LEXICAL_GROUPS,
) -> list[Candidate]:
    """Current drawers of the scope holding every word of at least one group, those matching
    the most groups first, then the newest.

    Not ranked by bm25 or ts_rank: those cost more than the match itself (ts_rank re-parses every
    matching row). Counting the groups a drawer matches is nearly free and is what tells a
    variant's original from a chance match.
    """
    return for_text(scope, "", None, words, lexical_limit=limit, groups=groups).lexical


def words_in_room(
    room_id: int, words: Sequence[str], *, holders: int = 1, lock: int | None = None
) -> set[str]:
    """Which of `words` at least `holders` drawers of the room hold (current or not: the
    full-text index's terms), in one round trip (on SQLite, a statement per SQLITE_WORDS_ASKED
    words), read once `lock` is held (see `for_text`). Each
    word's lookup stops at its `holders`-th drawer: on SQLite FTS5 reads the term's postings
    one by one; on PostgreSQL (`castellan_words_held`) the GIN index finds a term the room
    lacks in one descent, and reads the posting list of one it holds (short for the rare words
    this is asked of). In a room of 200,000, a text's unseen words took 0.07 ms on SQLite and
    0.3 ms on PostgreSQL (bench/recall.py's texts)."""
    words = list(dict.fromkeys(words))
    if not words:
        return set()
    if connection.vendor == "postgresql":
        terms = [fulltext.postgresql_match([word], room=room_id) for word in words]
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT * FROM {WORDS_FUNCTION_NAME}(%s, %s::text[], %s)", [lock, terms, holders]
            )
            return {words[index - 1] for (index,) in cursor.fetchall()}
    held: set[str] = set()
    lookup = (
        "SELECT {index} WHERE (SELECT COUNT(*) FROM (SELECT 1 FROM palace_drawer_fts "
        "WHERE palace_drawer_fts MATCH %s LIMIT %s)) >= %s"
    )
    # A text's words in one statement; a sweep's batch, in statements of SQLITE_WORDS_ASKED
    # (SQLite allows 500 SELECTs in one compound statement).
    for start in range(0, len(words), SQLITE_WORDS_ASKED):
        chunk = words[start : start + SQLITE_WORDS_ASKED]
        sql = " UNION ALL ".join(lookup.format(index=index) for index in range(len(chunk)))
        params: list = []
        for word in chunk:
            params += [fulltext.sqlite_match([word], room=room_id), holders, holders]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            held.update(chunk[index] for (index,) in cursor.fetchall())
    return held


def lexical_words(words: Sequence[str]) -> list[str]:
    return [word for word in words if word not in STOP_WORDS]


def lexical_groups(words: Sequence[str], groups: int = LEXICAL_GROUPS) -> list[list[str]]:
    """Split the longest words into at most `groups` small groups: a typo breaks one word, so
    one group. Words alone when there are two at most; in a script written without spaces
    (`single_groups`), alone when there are `groups` at most, else neighbours paired."""
    chosen = lexical_words(words)[: LEXICAL_GROUP_SIZE * groups]
    alone = single_groups(chosen, groups)
    if len(chosen) <= alone:
        return [[word] for word in chosen]
    if alone > LEXICAL_GROUP_SIZE:  # pieces of runs, in text order
        return [
            chosen[i : i + LEXICAL_GROUP_SIZE] for i in range(0, len(chosen), LEXICAL_GROUP_SIZE)
        ]
    count = -(-len(chosen) // LEXICAL_GROUP_SIZE)
    return [chosen[i::count] for i in range(count)]


def single_groups(words: Sequence[str], groups: int) -> int:
    """How many of `words` may each be a group alone: LEXICAL_GROUP_SIZE; or, when all are of a
    script written without spaces (`policy.is_unspaced`: the pieces of its sentences, three
    characters or more, telling as a long word of a spaced script), `groups`. One edit breaks
    one to three neighbouring pieces of a run, and a short sentence has three or four: paired
    by length, every pair could hold a broken one; alone, or paired with their neighbours (the
    words come in text order, `policy.query_words_of_normalized`), some are left whole
    (bench/unspaced_recall.py)."""
    if words and all(policy.is_unspaced(word) for word in words):
        return max(groups, LEXICAL_GROUP_SIZE)
    return LEXICAL_GROUP_SIZE


# --- SQLite ------------------------------------------------------------------------------------


def _for_text_sqlite(
    scope: Scope,
    content_hash: str,
    fingerprint: str | None,
    groups: list[list[str]],
    lengths: LengthBand,
    limit: int,
) -> tuple[str, list]:
    where, scope_params = _scope_sql(scope)
    # Two lookups on the partial indexes: an OR of the two would make SQLite scan the room.
    same = f"SELECT {_SELECT} FROM palace_drawer d WHERE {where} AND d.content_hash = %s"
    params = [*scope_params, content_hash]
    if fingerprint is not None:
        same += f" UNION SELECT {_SELECT} FROM palace_drawer d WHERE {where} AND d.fingerprint = %s"
        params += [*scope_params, fingerprint]
    sql = f"SELECT 0, s.* FROM (SELECT * FROM ({same}) ORDER BY 1 LIMIT %s) s"
    params.append(2 * EXACT_CANDIDATES)
    if not groups:
        return sql, params
    per_group, per_group_params = _group_lookups_sqlite(scope, groups)
    ranked = (
        "SELECT w.id, SUM(w.size < %s) AS rare, COUNT(*) AS hits FROM (SELECT g.id, "
        f"COUNT(*) OVER (PARTITION BY g.grp) AS size FROM ({per_group}) g) w GROUP BY w.id "
        "ORDER BY rare DESC, hits DESC, w.id DESC LIMIT %s"
    )
    sql += (
        f" UNION ALL SELECT 1, x.* FROM (SELECT {_SELECT} FROM ({ranked}) m "
        f"JOIN palace_drawer d ON d.id = m.id WHERE {where} AND (length(d.normalized_content) "
        "BETWEEN %s AND %s OR length(d.normalized_content) > %s) "
        "ORDER BY m.rare DESC, m.hits DESC, d.id DESC LIMIT %s) x"
    )
    return sql, [
        *params,
        GROUP_MATCHES,
        *per_group_params,
        SQLITE_RANKED_MATCHES,
        *scope_params,
        lengths.low,
        lengths.high,
        lengths.any_over,
        limit,
    ]


def _group_lookups_sqlite(scope: Scope, groups: list[list[str]]) -> tuple[str, list]:
    """The groups' lookups, one UNION ALL of (group, drawer id) rows: each group's words' terms
    in the room (`palace.fulltext`: a term is a word of one room, so only the room's postings
    are read), newest first and bounded; the ranking counts the rare groups' hits first (see
    GROUP_MATCHES)."""
    lookup = (
        "SELECT {index} AS grp, rowid AS id FROM palace_drawer_fts "
        "WHERE palace_drawer_fts MATCH %s ORDER BY rowid DESC LIMIT %s"
    )
    per_group = " UNION ALL ".join(
        f"SELECT * FROM ({lookup.format(index=index)})" for index in range(len(groups))
    )
    per_group_params: list = []
    for group in groups:
        per_group_params += [fulltext.sqlite_match(group, room=scope.room.id), GROUP_MATCHES]
    return per_group, per_group_params


def _scope_sql(scope: Scope) -> tuple[str, list]:
    clauses = ["d.room_id = %s", "d.valid_to IS NULL"]
    params: list = [scope.room.id]
    if scope.agent is not None:
        clauses.append("d.agent = %s")
        params.append(scope.agent)
    if scope.exclude_id is not None:
        clauses.append("d.id <> %s")
        params.append(scope.exclude_id)
    return " AND ".join(clauses), params


# --- PostgreSQL --------------------------------------------------------------------------------


def _for_text_postgresql(
    scope: Scope,
    content_hash: str,
    fingerprint: str | None,
    groups: list[list[str]],
    lengths: LengthBand,
    limit: int,
    lock: int | None,
) -> tuple[str, list]:
    queries = [fulltext.postgresql_match(group, room=scope.room.id) for group in groups]
    sql = (
        f"SELECT * FROM {POSTGRESQL_FUNCTION_NAME}"
        "(%s, %s, %s, %s, %s, %s, %s::text[], %s, %s, %s, %s, %s, %s)"
    )
    params = [
        lock,
        scope.room.id,
        scope.agent,
        scope.exclude_id,
        content_hash,
        fingerprint,
        queries,
        lengths.low,
        lengths.high,
        lengths.any_over,
        2 * EXACT_CANDIDATES,
        limit,
        GROUP_MATCHES,
    ]
    return sql, params


__all__ = [
    "POSTGRESQL_FUNCTION",
    "POSTGRESQL_FUNCTION_NAME",
    "POSTGRESQL_FUNCTION_REMOVE",
    "WORDS_FUNCTION",
    "WORDS_FUNCTION_NAME",
    "WORDS_FUNCTION_REMOVE",
]
