"""A sweep's candidates, a batch of drawers at a time: for each drawer, exactly what `for_text`
returns for it alone (its scope, itself excluded, no lock), with the write path's arguments. In a
room of `room_words.COMMON_WORDS_LEFT_OUT` drawers or more, its word groups leave out the words
fewer than two drawers hold, where a write's leave out those no drawer holds: each stored drawer
holds its own words (`words_absent`, asked once a batch), but for the words past what
PostgreSQL indexes of a long text, left out only if no drawer holds them.

On PostgreSQL the batch is one call of the function `castellan_sweep_candidates`
(`POSTGRESQL_BATCH_FUNCTION`, installed by dedup's migration 0007, which holds its own copy of the
text): one round trip and one plan for the whole batch instead of a call, and seven plans, per
drawer. It asks what `castellan_drawer_candidates` asks, drawer by drawer, as one statement: each
group's newest `p_group_limit` matches (a lateral full-text lookup per group, the same expression
and the same plan fence), the ranking (groups that fill their bound count after the rare ones)
and its limit per drawer before superseded drawers are dropped, and the drawers with the same
bytes or normalised text. On SQLite, which has no round trip to save, each drawer is its own
`for_text` statement. Both are for rooms too big to hold: a room of at most
`sweep_rooms.MAX_DRAWERS` is read once and each drawer's query answered from memory, as each
database's statement would (`sweep_rooms`: no full-text lookup).
tests/review/test_sweep_batch.py checks they all give the same candidates.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import connection

from dedup import policy
from dedup.candidates import room_words
from dedup.candidates.drawers import (
    ANY_LENGTH,
    EXACT_CANDIDATES,
    GROUP_MATCHES,
    LEXICAL_CANDIDATES,
    Candidate,
    Found,
    LengthBand,
    Scope,
    for_text,
    lexical_words,
    words_in_room,
)
from dedup.candidates.room_words import query_groups
from dedup.candidates.sweep_rooms import Rooms
from palace import fulltext


@dataclass(frozen=True, slots=True)
class Query:
    """One drawer's candidate query: what `for_text` is given for it."""

    id: int
    content_hash: str
    fingerprint: str | None
    words: Sequence[str]
    lengths: LengthBand = ANY_LENGTH
    # Of `words`, those the drawer's own entry in the full-text index does not hold: on
    # PostgreSQL, the words past what it indexes of a text (`fulltext.indexed_words`).
    unindexed: frozenset[str] = frozenset()


def near_lengths(text: policy.Text, threshold: float) -> LengthBand | None:
    """The lengths a lexical candidate of this text may have to be near at `threshold`, or None
    when the text is too short to be near anything (it gets no lexical query). The write path's
    `dedup.services.candidates_for_text` asks the same."""
    if len(text.normalized) < policy.MIN_NEAR_CHARS:
        return None
    low, high = policy.near_length_range(len(text.normalized), threshold)
    return LengthBand(low, ANY_LENGTH.high if high is None else high, policy.EDIT_DISTANCE_LIMIT)


def query_of(pk: int, text: policy.Text, threshold: float) -> Query:
    """The query `dedup.services.candidates_for_text` makes of a text: no words when the text
    is too short to be near anything, else its words and only the lengths that can be near at
    `threshold` (the word groups are chosen as the write path's, by `query_groups`, in
    `for_texts`)."""
    lengths = near_lengths(text, threshold)
    if lengths is None:
        return Query(pk, text.content_hash, text.fingerprint, [])
    words = policy.query_words_of_normalized(text.normalized)
    return Query(pk, text.content_hash, text.fingerprint, words, lengths, _unindexed(text, words))


def _unindexed(text: policy.Text, words: Sequence[str]) -> frozenset[str]:
    """The query's words its own drawer's index entry lacks (none but on PostgreSQL, past the
    part of a text it indexes)."""
    # A query word has at most QUERY_WORD_MAX_CHARS characters, so at most as many bytes as the
    # index keeps of a word: only the cut of a long text leaves some out.
    if connection.vendor != "postgresql":
        return frozenset()
    # What is indexed is the index text where there is one (`policy.index_text`: spaces between
    # pieces make it longer than the normalised text).
    indexed = policy.indexed_text(text.normalized)
    if len(indexed) <= fulltext.POSTGRESQL_MAX_CHARACTERS:
        return frozenset()
    return frozenset(words) - set(fulltext.indexed_words(indexed, connection.vendor))


def for_texts(
    scope: Scope, queries: Sequence[Query], *, groups: int, rooms: Rooms | None = None
) -> dict[int, Found]:
    """Each query's candidates in the scope (each drawer excluded from its own), by drawer id:
    from the room in memory (`sweep_rooms`) when it can be held, kept by `rooms` across a part's
    batches (else read for this call); else from the database."""
    if not queries:
        return {}
    absent = _absent_by_query(scope.room.id, queries)
    word_groups = {
        # `holders` counts only if the sample changed since `absent` was read (the room then
        # grew past COMMON_WORDS_LEFT_OUT): a long text's query then counts its own drawer as
        # no holder of any word, which keeps a word only it holds, never drops one held.
        query.id: query_groups(
            scope.room.id,
            query.words,
            groups,
            absent=absent[query.id],
            holders=1 if query.unindexed else 2,
        )
        if query.words
        else []
        for query in queries
    }
    index = (rooms or Rooms()).get(scope.room.id, scope.agent)
    if index is not None:
        return {
            query.id: index.found(
                Scope(room=scope.room, agent=scope.agent, exclude_id=query.id),
                query.content_hash,
                query.fingerprint,
                word_groups[query.id],
                query.lengths,
                LEXICAL_CANDIDATES,
            )
            for query in queries
        }
    if connection.vendor != "postgresql":
        return _for_texts_sqlite(scope, queries, word_groups)
    return _for_texts_postgresql(scope, queries, word_groups)


def words_absent(room_id: int, texts: Iterable[Sequence[str]], *, holders: int) -> set[str] | None:
    """For a batch of texts of the room (a sweep's), in one round trip, the words that fewer
    than `holders` drawers of the room hold, of those of `texts` the sample has not seen (the
    words `query_groups` would ask, given the same `holders`). None for a room under
    `room_words.COMMON_WORDS_LEFT_OUT`, whose groups ask the index nothing. The sample cached
    is read without counting a lookup (each text's `query_groups` counts its own); a word it
    has seen is not asked, and so is kept; a text whose fresh sample makes its room big while
    this one did not asks the index itself, with the same `holders`."""
    # room_words' names looked up at each call: a sample put in their place (tests) is read.
    found = room_words.peek(room_id) or room_words.sample(room_id)
    if found.drawers < room_words.COMMON_WORDS_LEFT_OUT:
        return None
    unseen = sorted({w for words in texts for w in lexical_words(words) if w not in found.seen})
    return set(unseen) - words_in_room(room_id, unseen, holders=holders)


def _absent_by_query(room_id: int, queries: Sequence[Query]) -> dict[int, set[str] | None]:
    """For each query, the words its groups leave out (`words_absent`; None in a room
    too small to ask): those the room holds in fewer than two drawers, each drawer holding its
    own words; but a word its own index entry lacks (`Query.unindexed`) is left out only if no
    drawer holds it, which the index is asked again, for those words only."""
    absent = words_absent(room_id, [query.words for query in queries], holders=2)
    if absent is None:
        return {query.id: None for query in queries}
    unindexed = set().union(*(query.unindexed for query in queries)) & absent
    held = words_in_room(room_id, sorted(unindexed)) if unindexed else set()
    kept = {query.id: query.unindexed & held for query in queries}
    # The batch's one set, but for a query that keeps some of it.
    return {query.id: absent - kept[query.id] if kept[query.id] else absent for query in queries}


def _for_texts_postgresql(
    scope: Scope, queries: Sequence[Query], word_groups: dict[int, list[list[str]]]
) -> dict[int, Found]:
    """One call of the batch function."""
    owners: list[int] = []
    texts: list[str] = []
    for owner, query in enumerate(queries, start=1):
        for group in word_groups[query.id]:
            owners.append(owner)
            texts.append(fulltext.postgresql_match(group, room=scope.room.id))
    params = [
        scope.room.id,
        scope.agent,
        [query.id for query in queries],
        [query.content_hash for query in queries],
        [query.fingerprint for query in queries],
        [query.lengths.low for query in queries],
        [query.lengths.high for query in queries],
        [query.lengths.any_over for query in queries],
        owners,
        texts,
        2 * EXACT_CANDIDATES,
        LEXICAL_CANDIDATES,
        GROUP_MATCHES,
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT * FROM {POSTGRESQL_BATCH_FUNCTION_NAME}(%s, %s, %s::bigint[], %s::text[], "
            "%s::text[], %s::bigint[], %s::bigint[], %s::bigint[], %s::int[], %s::text[], "
            "%s, %s, %s)",
            params,
        )
        rows = cursor.fetchall()
    found = {query.id: Found([], []) for query in queries}
    for owner, part, _, *row in rows:
        each = found[queries[owner - 1].id]
        (each.lexical if part else each.same).append(Candidate(*row))
    return found


def _for_texts_sqlite(
    scope: Scope, queries: Sequence[Query], word_groups: dict[int, list[list[str]]]
) -> dict[int, Found]:
    """Each drawer's own `for_text` statement (SQLite has no round trip to save)."""
    return {
        query.id: for_text(
            Scope(room=scope.room, agent=scope.agent, exclude_id=query.id),
            query.content_hash,
            query.fingerprint,
            query.words,
            lengths=query.lengths,
            word_groups=word_groups[query.id],
        )
        for query in queries
    }


POSTGRESQL_BATCH_FUNCTION_NAME = "castellan_sweep_candidates"

# Drawer i of the batch is the i-th element of every per-drawer array; a group names its drawer
# by that position (p_owners) and reads its drawer's values by subscript (a join of the groups
# with the batch, whose size the planner cannot know, became a nested loop: half the call's time).
# See `castellan_drawer_candidates` (dedup/candidates/drawer_function.py) for why each lookup is
# fenced (OFFSET 0), why its terms are the room's, and why table scans are off. Rows come back
# drawer by drawer, the same ones first (by id), then the lexical ones ranked.
POSTGRESQL_BATCH_FUNCTION = f"""
CREATE OR REPLACE FUNCTION {POSTGRESQL_BATCH_FUNCTION_NAME}(
    p_room bigint, p_agent text, p_ids bigint[], p_hashes text[], p_fingerprints text[],
    p_min_lengths bigint[], p_max_lengths bigint[], p_any_lengths_over bigint[],
    p_owners int[], p_groups text[],
    p_same_limit int, p_lexical_limit int, p_group_limit int)
RETURNS TABLE (
    owner bigint, part int, rank bigint, id bigint, uuid uuid, content_hash varchar,
    normalized_content text, fingerprint varchar)
LANGUAGE sql STABLE
SET enable_seqscan = off
SET max_parallel_workers_per_gather = 0
SET jit = off
AS $$
WITH batch AS (
    SELECT b.owner, b.id, b.hash, b.fingerprint, b.low, b.high, b.over
    FROM unnest(p_ids, p_hashes, p_fingerprints, p_min_lengths, p_max_lengths,
                p_any_lengths_over)
         WITH ORDINALITY AS b(id, hash, fingerprint, low, high, over, owner)
), groups AS (
    SELECT g.grp, g.owner, g.query, p_ids[g.owner] AS exclude, p_min_lengths[g.owner] AS low,
           p_max_lengths[g.owner] AS high, p_any_lengths_over[g.owner] AS over
    FROM unnest(p_owners, p_groups) WITH ORDINALITY AS g(owner, query, grp)
), found AS (
    SELECT g.owner, g.grp, f.id, count(*) OVER (PARTITION BY g.grp) AS size
    FROM groups g CROSS JOIN LATERAL (
        SELECT f.id FROM (
            SELECT m.id FROM palace_drawer m
            WHERE {fulltext.postgresql_document("m")}
                  @@ {fulltext.postgresql_query("g.query")}
              AND (p_agent IS NULL OR m.agent = p_agent)
              AND m.id <> g.exclude
              AND (char_length(m.normalized_content) BETWEEN g.low AND g.high
                   OR char_length(m.normalized_content) > g.over)
            OFFSET 0
        ) f
        ORDER BY f.id DESC LIMIT p_group_limit
    ) f
), ranked AS (
    SELECT h.owner, h.id, row_number() OVER (
        PARTITION BY h.owner
        ORDER BY count(*) FILTER (WHERE h.size < p_group_limit) DESC, count(*) DESC, h.id DESC
    ) AS rank
    FROM found h
    GROUP BY h.owner, h.id
)
SELECT b.owner, 0, 0::bigint, s.*
FROM batch b CROSS JOIN LATERAL (
    SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
    FROM palace_drawer d
    WHERE d.room_id = p_room AND d.valid_to IS NULL AND d.content_hash = b.hash
      AND (p_agent IS NULL OR d.agent = p_agent) AND d.id <> b.id
    UNION
    SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
    FROM palace_drawer d
    WHERE d.room_id = p_room AND d.valid_to IS NULL AND d.fingerprint = b.fingerprint
      AND (p_agent IS NULL OR d.agent = p_agent) AND d.id <> b.id
    ORDER BY 1 LIMIT p_same_limit
) s
UNION ALL
SELECT r.owner, 1, r.rank, d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
FROM ranked r JOIN palace_drawer d ON d.id = r.id
WHERE r.rank <= p_lexical_limit AND d.valid_to IS NULL
ORDER BY 1, 2, 3, 4
$$
"""
POSTGRESQL_BATCH_FUNCTION_REMOVE = (
    f"DROP FUNCTION IF EXISTS {POSTGRESQL_BATCH_FUNCTION_NAME}(bigint, text, bigint[], text[], "
    "text[], bigint[], bigint[], bigint[], int[], text[], int, int, int)"
)
