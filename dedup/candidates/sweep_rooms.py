"""A sweep's candidates from its room held in memory: exactly what `for_text` returns for each
drawer, on either database, without its full-text lookups.

A sweep asks a query for every drawer of a room: on SQLite each group is an FTS5 lookup (about
0.5 ms of CPU a lookup in a table of 1,000,000 drawers, six a drawer), on PostgreSQL the batch
function's GIN lookups, heap reads and ranking run in the server for every drawer. So a part
reads its room once (`RoomIndex.load`: its drawers, the words the index holds of each
(`fulltext.indexed_words`), their exact keys) and answers each query from that, the way the
database's own statement does:
- SQLite (`for_text`'s statement): each group's newest GROUP_MATCHES drawers of the room holding
  all its words (superseded and other agents' included, as the index's lookup does), ranked by
  rare groups, then hits, then newest, the first SQLITE_RANKED_MATCHES kept, then those in the
  scope and the length band, at most the query's limit;
- PostgreSQL (`castellan_drawer_candidates`): each group's newest GROUP_MATCHES drawers holding
  its words among the scope's agent and the length band (superseded included), ranked the same,
  the first `limit` kept, then the superseded dropped;
and on both the current drawers with the same bytes or normalised text. A query's words are never
longer than `policy.QUERY_WORD_MAX_CHARS`, which the index always holds, so every query is
answered. tests/review/test_sweep_batch.py checks it against `for_text` on both databases.

Rooms over MAX_DRAWERS, or holding more than MAX_CHARACTERS of text, are asked of the index as
before. `Rooms` keeps one room for a part's batches and reads it again when its drawers change.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from django.db import connection

from dedup import policy
from dedup.candidates.drawers import (
    EXACT_CANDIDATES,
    GROUP_MATCHES,
    SQLITE_RANKED_MATCHES,
    Candidate,
    Found,
    LengthBand,
    Scope,
)
from palace import fulltext

MAX_DRAWERS = 100_000  # a bigger room is asked of the full-text index, part by part
MAX_CHARACTERS = 100_000_000  # of normalised text held: a room of longer texts is asked of it too


@dataclass(frozen=True, slots=True)
class Row:
    candidate: tuple  # (id, uuid, content_hash, normalized_content, fingerprint): a Candidate's
    current: bool
    agent: str


@dataclass
class RoomIndex:
    """A room's drawers by id, each indexed word's drawers, and the exact keys, answering as
    the `vendor`'s statement does."""

    vendor: str
    rows: dict[int, Row] = field(default_factory=dict)
    holders: dict[str, set[int]] = field(default_factory=dict)
    by_hash: dict[str, list[int]] = field(default_factory=dict)
    by_fingerprint: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def load(cls, room_id: int, agent: str | None = None) -> RoomIndex | None:
        """The room in memory (given an agent, only its drawers: PostgreSQL's lookups keep the
        scope's agent before their bound, SQLite's do not), or None when it is too big to be."""
        where, params = _drawers_of(room_id, agent)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id, uuid, content_hash, normalized_content, fingerprint, "
                f"valid_to IS NULL, agent, {fulltext.indexed_column()} "
                f"FROM palace_drawer WHERE {where} ORDER BY id LIMIT %s",
                [*params, MAX_DRAWERS + 1],
            )
            rows = cursor.fetchall()
        if len(rows) > MAX_DRAWERS:
            return None
        if sum(len(row[3]) for row in rows) > MAX_CHARACTERS:
            return None
        index = cls(connection.vendor)
        for (
            pk,
            public_id,
            content_hash,
            normalized,
            fingerprint,
            current,
            agent_of,
            indexed,
        ) in rows:
            candidate = (pk, public_id, content_hash, normalized, fingerprint)
            index.rows[pk] = Row(candidate, bool(current), agent_of)
            for word in set(fulltext.indexed_words(indexed, index.vendor)):
                if policy.is_query_word(word):  # not a pair of characters, which none asks
                    index.holders.setdefault(word, set()).add(pk)
            if current:
                index.by_hash.setdefault(content_hash, []).append(pk)
                if fingerprint is not None:
                    index.by_fingerprint.setdefault(fingerprint, []).append(pk)
        return index

    def found(
        self,
        scope: Scope,
        content_hash: str,
        fingerprint: str | None,
        groups: Sequence[Sequence[str]],
        lengths: LengthBand,
        limit: int,
    ) -> Found:
        """What `for_text(scope, ..., word_groups=groups)` returns."""
        same_ids = set(self.by_hash.get(content_hash, ()))
        if fingerprint is not None:
            same_ids.update(self.by_fingerprint.get(fingerprint, ()))
        in_scope = sorted(pk for pk in same_ids if self._in(scope, pk))
        same = [Candidate(*self.rows[pk].candidate) for pk in in_scope[: 2 * EXACT_CANDIDATES]]
        return Found(same, self._lexical(scope, groups, lengths, limit) if groups else [])

    def _in(self, scope: Scope, pk: int) -> bool:
        row = self.rows[pk]
        return (
            row.current
            and (scope.agent is None or row.agent == scope.agent)
            and pk != scope.exclude_id
        )

    def _lexical(
        self, scope: Scope, groups: Sequence[Sequence[str]], lengths: LengthBand, limit: int
    ) -> list[Candidate]:
        postgresql = self.vendor == "postgresql"
        counts: dict[int, list[int]] = {}  # id: [rare groups, groups]
        for group in groups:
            matched = self._newest(group, scope, lengths) if postgresql else self._newest(group)
            rare = int(len(matched) < GROUP_MATCHES)
            for pk in matched:
                count = counts.setdefault(pk, [0, 0])
                count[0] += rare
                count[1] += 1
        ranked = sorted(counts, key=lambda pk: (-counts[pk][0], -counts[pk][1], -pk))
        if postgresql:  # ranked among the scope's and the band's, then the superseded dropped
            return [
                Candidate(*self.rows[pk].candidate)
                for pk in ranked[:limit]
                if self.rows[pk].current
            ]
        found: list[Candidate] = []
        for pk in ranked[:SQLITE_RANKED_MATCHES]:
            if self._near(pk, lengths) and self._in(scope, pk):
                found.append(Candidate(*self.rows[pk].candidate))
                if len(found) == limit:
                    break
        return found

    def _near(self, pk: int, lengths: LengthBand) -> bool:
        size = len(self.rows[pk].candidate[3])
        return lengths.low <= size <= lengths.high or size > lengths.any_over

    def _newest(
        self,
        group: Sequence[str],
        scope: Scope | None = None,
        lengths: LengthBand | None = None,
    ) -> list[int]:
        """The room's newest GROUP_MATCHES drawers holding every word of the group (given a
        scope and lengths, of the scope's agent and the band, itself excluded)."""
        holders = [self.holders.get(word) for word in group]
        if not holders or any(each is None for each in holders):
            return []
        matched = set.intersection(*cast(list[set[int]], holders))
        if scope is not None and lengths is not None:
            matched = {
                pk
                for pk in matched
                if pk != scope.exclude_id
                and (scope.agent is None or self.rows[pk].agent == scope.agent)
                and self._near(pk, lengths)
            }
        return heapq.nlargest(GROUP_MATCHES, matched)  # sorts outright when few


def _drawers_of(room_id: int, agent: str | None) -> tuple[str, list[int | str]]:
    """The condition (and its parameters) of a room's drawers, or of one agent's in it."""
    if agent is None:
        return "room_id = %s", [room_id]
    return "room_id = %s AND agent = %s", [room_id, agent]


class Rooms:
    """The room a sweep's part holds in memory (one at a time; on PostgreSQL, only the scope's
    agent's drawers), read again whenever its drawers changed since (their count, ids,
    superseded count and current ids). A room found too big stays asked of the index for the
    part: it is not counted again at every batch."""

    def __init__(self) -> None:
        self._held: tuple | None = None  # (room, agent, version) of the index below
        self._index: RoomIndex | None = None

    def get(self, room_id: int, agent: str | None = None) -> RoomIndex | None:
        held_agent = agent if connection.vendor == "postgresql" else None
        same_room = self._held is not None and self._held[:2] == (room_id, held_agent)
        if same_room and self._index is None:
            return None
        where, params = _drawers_of(room_id, held_agent)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*), max(id), sum(id), count(valid_to), "
                "sum(CASE WHEN valid_to IS NULL THEN id ELSE 0 END) "
                f"FROM palace_drawer WHERE {where}",
                params,
            )
            held = (room_id, held_agent, tuple(cursor.fetchone()))
        if held != self._held:
            too_big = held[2][0] > MAX_DRAWERS  # known from the count: no rows read
            self._held = held
            self._index = None if too_big else RoomIndex.load(room_id, held_agent)
        return self._index
