"""Bulk fills for the scale benchmarks: millions of drawers in minutes, as the rows the write path
would store (the same derived columns, defaults and full-text entries; no links, since random
sentences resemble nothing at the write path's threshold).

PostgreSQL: the drawer table's secondary indexes (the full-text one included) are dropped, the rows
are sent with COPY, and the indexes are created again from their own definitions
(`pg_indexes.indexdef`, so exactly what the migrations made), with foreign-key triggers skipped
(the rooms exist). SQLite: `executemany` in transactions of 100,000 rows, the full-text triggers
live, so the FTS5 rows are those of a write. Both end with `settle()` (VACUUM ANALYZE; FTS5
optimize), the state a palace reaches after `manage.py dedup_maintain`.

Rooms are filled interleaved (row i into room i mod n), as writes into many rooms would arrive: a
room's drawers are spread over the whole table, its worst case for locality.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Iterator, Sequence

from bench._common import BULK_COLUMNS as _COLUMNS
from bench._common import Vocabulary, sentences, settle
from palace import fulltext

BATCH = 100_000


def rows(room_ids: Sequence[int], vocabulary: Vocabulary, count: int, now) -> Iterator[tuple]:
    """The drawer rows of `count` new sentences over the rooms, interleaved, in `_COLUMNS` order,
    with the values `services.drawer_write` stores (derived by `policy.Text.of`)."""
    from dedup import policy

    for index, text in enumerate(sentences(vocabulary, count)):
        derived = policy.Text.of(text)
        yield (
            uuid.uuid4(),
            room_ids[index % len(room_ids)],
            text,
            derived.content_hash,
            derived.normalized,
            policy.index_text(derived.normalized),
            derived.fingerprint,
            None,
            "",
            "",
            "{}",
            now,
            None,
            None,
            "{}",
            now,
        )


def bulk_fill(rooms: Sequence, vocabulary: Vocabulary, count: int) -> float:
    """Add `count` drawers spread over `rooms`; the seconds it took, settling included."""
    from django.db import connection
    from django.utils import timezone

    started = time.perf_counter()
    room_ids = [room.id for room in rooms]
    if count > 0:
        produced = rows(room_ids, vocabulary, count, timezone.now())
        if connection.vendor == "postgresql":
            _copy_postgresql(connection, produced)
        else:
            _insert_sqlite(connection, produced)
    settle()
    return time.perf_counter() - started


def _copy_postgresql(connection, produced: Iterator[tuple]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.tablename = 'palace_drawer' "
            "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)"
        )
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX "{name}"')
        cursor.execute("SET session_replication_role = replica")  # no FK trigger per row
        copy_sql = f"COPY palace_drawer ({', '.join(_COLUMNS)}) FROM STDIN"
        with cursor.cursor.copy(copy_sql) as copy:
            for row in produced:
                copy.write_row(row)
        cursor.execute("SET session_replication_role = DEFAULT")
        cursor.execute("SET maintenance_work_mem = '512MB'")
        for _, definition in indexes:
            cursor.execute(definition)
        cursor.execute("RESET maintenance_work_mem")


def _insert_sqlite(connection, produced: Iterator[tuple]) -> None:
    """The drawer table's own indexes and the full-text triggers are set aside during the load
    and made again from their own SQL (`sqlite_master`); the FTS5 index is then filled from the
    table, which gives the entries the insert trigger would have made."""
    placeholders = ", ".join("?" for _ in _COLUMNS)
    sql = f"INSERT INTO palace_drawer ({', '.join(_COLUMNS)}) VALUES ({placeholders})"
    connection.ensure_connection()
    raw = connection.connection
    aside = raw.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'palace_drawer' "
        "AND sql IS NOT NULL AND (type = 'index' OR name LIKE 'palace_drawer_fts_%')"
    ).fetchall()
    for kind, name, _ in aside:
        raw.execute(f'DROP {kind.upper()} "{name}"')
    while batch := [_sqlite_row(row) for row in itertools.islice(produced, BATCH)]:
        raw.execute("BEGIN")  # one transaction per batch (the connection is in autocommit)
        raw.executemany(sql, batch)
        raw.execute("COMMIT")
    for _, _, definition in aside:
        raw.execute(definition)
    raw.execute("INSERT INTO palace_drawer_fts(palace_drawer_fts) VALUES ('delete-all')")
    raw.execute(fulltext.SQLITE[-1])  # the terms of every drawer, as the migration fills them


def _sqlite_row(row: tuple) -> tuple:
    """The values as Django stores them on SQLite: the uuid as 32 hex digits, times as text."""
    from django.db import connection

    values = list(row)
    values[0] = values[0].hex
    for column in ("valid_from", "created_at"):
        position = _COLUMNS.index(column)
        values[position] = connection.ops.adapt_datetimefield_value(values[position])
    return tuple(values)
