"""Entities found by a piece of their name or of an alias (`GET /api/entities?name=`, the
admin's search), from trigram indexes rather than a scan: a page for a rare text read every
entity (at 1,000,000 entities on SQLite, 77 to 204 ms; 2 to 19 ms from the indexes).

The search keeps the meaning of Django's `icontains` on each database, which the tests hold to
the scan's answer: SQLite's LIKE, case-insensitive in ASCII only; PostgreSQL's UPPER() on both
sides. Each index is asked first for at most PROBE ids: a rare text is those ids; a common one
is `icontains` in the page's order, which fills a page within a few rows (`entities_named_like`).

SQLite: an FTS5 table with the `trigram` tokenizer over each column (external content: the rows
stay in their tables, the index holds trigrams only, no positions), kept in step by triggers.
FTS5 answers a `LIKE` of its column from the trigrams of the pattern and checks each row found
against the pattern itself. It serves a LIKE without ESCAPE only, so a text holding a LIKE
wildcard (`%` or `_`) is searched by the scan, as is a text of fewer than three characters (it
has no trigram: the index would be read whole, and SQLite 3.40 gets one wrong, below).
PostgreSQL: a `pg_trgm` GIN index on the expression `icontains` compares (UPPER(column::text)),
fastupdate off as for the drawers' full-text index (a pending list is read by every search); its
probes run with table scans off (`_postgresql_ids`).
`pg_trgm` is a trusted extension: the database's owner may create it.

A new entity or alias costs its trigrams: on SQLite about 30 us more for its insert (median;
FTS5 merges its segments now and then, a few ms).

This module is the live definition: the search uses its names, and tests/dedup/test_migrations.py
checks that what the migrations installed is what it defines. Migrations never import it: each
holds its own copy of the SQL it ran. As for palace/fulltext.py, a migration that makes Django
rebuild `palace_entity` or `palace_entityalias` on SQLite drops the triggers with the old table:
it must end by creating them again (`SQLITE`: its statements can run again; its 'rebuild' reads
the table once more).
"""

from __future__ import annotations

import functools
import json
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import cast

from django.db import connection, transaction
from django.db.models import BooleanField, CharField, F, Func, Q, Value
from django.db.models.expressions import RawSQL

from palace.models import Entity, EntityAlias

# (table, its indexed column, the index: FTS5 table on SQLite, GIN index on PostgreSQL)
INDEXED = (
    ("palace_entity", "name", "palace_entity_name_trigrams"),
    ("palace_entityalias", "alias", "palace_entityalias_trigrams"),
)
LIKE_WILDCARDS = ("%", "_")
TRIGRAM = 3
# Ids read from an index before a piece of a name is deemed common (`entities_named_like`).
PROBE = 2_000
# The longest a name or an alias is: no longer text is contained in one.
LONGEST = max(
    cast(CharField, Entity._meta.get_field("name")).max_length or 0,
    cast(CharField, EntityAlias._meta.get_field("alias")).max_length or 0,
)


def _sqlite_statements(table: str, column: str, index: str) -> list[str]:
    return [
        f"""
        CREATE VIRTUAL TABLE IF NOT EXISTS {index} USING fts5(
            {column},
            content='{table}',
            content_rowid='id',
            columnsize=0,
            detail=none,
            tokenize='trigram'
        )
        """,
        f"""
        CREATE TRIGGER IF NOT EXISTS {index}_insert AFTER INSERT ON {table} BEGIN
            INSERT INTO {index}(rowid, {column}) VALUES (new.id, new.{column});
        END
        """,
        f"""
        CREATE TRIGGER IF NOT EXISTS {index}_delete AFTER DELETE ON {table} BEGIN
            INSERT INTO {index}({index}, rowid, {column}) VALUES ('delete', old.id, old.{column});
        END
        """,
        f"""
        CREATE TRIGGER IF NOT EXISTS {index}_update AFTER UPDATE OF id, {column} ON {table} BEGIN
            INSERT INTO {index}({index}, rowid, {column}) VALUES ('delete', old.id, old.{column});
            INSERT INTO {index}(rowid, {column}) VALUES (new.id, new.{column});
        END
        """,
        f"INSERT INTO {index}({index}) VALUES ('rebuild')",
    ]


SQLITE = [statement for indexed in INDEXED for statement in _sqlite_statements(*indexed)]
SQLITE_REMOVE = [
    statement
    for _, _, index in INDEXED
    for statement in (
        f"DROP TRIGGER IF EXISTS {index}_update",
        f"DROP TRIGGER IF EXISTS {index}_delete",
        f"DROP TRIGGER IF EXISTS {index}_insert",
        f"DROP TABLE IF EXISTS {index}",
    )
]
SQLITE_OBJECTS = [
    name
    for _, _, index in INDEXED
    for name in (index, f"{index}_insert", f"{index}_delete", f"{index}_update")
]
POSTGRESQL = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    *(
        f"CREATE INDEX IF NOT EXISTS {index} ON {table} "
        f"USING gin ((upper(({column})::text)) gin_trgm_ops) WITH (fastupdate = off)"
        for table, column, index in INDEXED
    ),
]
POSTGRESQL_REMOVE = [f"DROP INDEX IF EXISTS {index}" for _, _, index in INDEXED]
POSTGRESQL_OBJECTS = [index for _, _, index in INDEXED]


def entities_named_like(text: str) -> Q:
    """The filter of the entities whose name, or one of whose aliases, contains `text` (as
    `icontains` finds it).

    A rare text is the ids its indexes hold, read first (one search each, at most PROBE ids).
    A common one, held by more than PROBE names, is the scan it was before the indexes:
    `icontains` on the name, or an alias's, in the page's id order, which fills a page within a
    few rows of the table, where the index would read every match before the page takes its
    first 50 (232,000 for "men" at 1,000,000 entities: 374 ms on SQLite, against 0.2 for the
    first 50 of the scan). The aliases stay a subquery there, not the ids their index found:
    PostgreSQL would otherwise OR the two indexes and read every matching name. A text the index
    cannot answer (`_sqlite_indexable`) is searched by the scan too, and one longer than any
    name or alias finds nothing, unread."""
    if len(text) > LONGEST:
        return Q(pk__in=[])
    names = _probe(_name_ids, text)
    by_alias = Q(pk__in=EntityAlias.objects.filter(alias__icontains=text).values("entity_id"))
    if names is None:
        return Q(name__icontains=text) | by_alias
    aliases = _probe(_alias_entity_ids, text)
    if aliases is None:
        return Q(pk__in=_ids(names)) | by_alias
    return Q(pk__in=_ids(set(names) | set(aliases)))


def entity_ids_named(text: str) -> list[int] | None:
    """The ids of the entities whose name contains `text` (as `icontains` finds it; aliases
    aside), from the names' index (the review queue's entity links, by either side's name):
    None when the index cannot say or holds more than PROBE (a common text, for the scan in
    the page's order, as in `entities_named_like`)."""
    if len(text) > LONGEST:
        return []
    return _probe(_name_ids, text)


def any_column_among(columns: Sequence[str], ids: Iterable[int]) -> Q:
    """The filter of the rows any of whose columns (by field name) holds one of the ids, the ids
    one parameter a column. PostgreSQL: `column = ANY(array)`, whose rows its planner estimates
    from the array, so it ORs the columns' indexes (given `IN (SELECT unnest(...))`, it took
    half the table to match and filtered the queue's order with it: 60 ms for a page over
    100,000 entity links, against 5). SQLite: `IN` the ids of `json_each`, which it ORs the
    indexes for. The columns are expressions the ORM names, so it holds in a subquery too."""
    ordered = sorted(ids)
    if connection.vendor != "postgresql":
        return functools.reduce(operator.or_, (Q(**{f"{c}__in": _ids(ordered)}) for c in columns))
    array = "{" + ",".join(map(str, ordered)) + "}"
    among = (
        Func(
            F(column),
            Value(array),
            arg_joiner=" = ANY(",
            template="%(expressions)s::bigint[])",
            output_field=BooleanField(),
        )
        for column in columns
    )
    return functools.reduce(operator.or_, (Q(condition) for condition in among))


def _ids(ids: Iterable[int]) -> RawSQL:
    """Ids as one parameter of a subquery (an array on PostgreSQL, a JSON array on SQLite): the
    ORM prepares a list's values one by one, 20 us each (40 ms for 2,000)."""
    ordered = sorted(ids)
    if connection.vendor == "postgresql":
        return RawSQL("SELECT unnest(%s::bigint[])", ["{" + ",".join(map(str, ordered)) + "}"])
    return RawSQL("SELECT value FROM json_each(%s)", [json.dumps(ordered)])


def _probe(ids_of: Callable[[str, int], list[int] | None], text: str) -> list[int] | None:
    """The ids the index holds for the text, or None if it cannot say or holds more than
    PROBE."""
    ids = ids_of(text, PROBE + 1)
    return None if ids is None or len(ids) > PROBE else ids


def _name_ids(text: str, limit: int) -> list[int] | None:
    table, column, index = INDEXED[0]
    if connection.vendor == "postgresql":
        return _postgresql_ids(f"SELECT id FROM {table} WHERE {_UPPER.format(column)}", text, limit)
    if not _sqlite_indexable(text):
        return None
    return _sqlite_ids(f"SELECT rowid FROM {index} WHERE {column} LIKE %s LIMIT %s", text, limit)


def _alias_entity_ids(text: str, limit: int) -> list[int] | None:
    table, column, index = INDEXED[1]
    if connection.vendor == "postgresql":
        sql = f"SELECT entity_id FROM {table} WHERE {_UPPER.format(column)}"
        return _postgresql_ids(sql, text, limit)
    if not _sqlite_indexable(text):
        return None
    return _sqlite_ids(
        f"SELECT entity_id FROM {table} WHERE id IN "
        f"(SELECT rowid FROM {index} WHERE {column} LIKE %s LIMIT %s)",
        text,
        limit,
    )


# What `icontains` compares on PostgreSQL (its index's expression), the pattern escaped as it
# escapes it.
_UPPER = "upper(({})::text) LIKE upper(%s)"


def _postgresql_ids(where: str, text: str, limit: int) -> list[int]:
    """The ids of a probe on PostgreSQL, table scans off for it alone: psycopg prepares a
    statement run often, and its generic plan, not knowing the pattern, read the table until it
    had `limit` rows (144 ms for "Quito" at 1,000,000 entities, against 13 from the index)."""
    pattern = f"%{connection.ops.prep_for_like_query(text)}%"
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('enable_seqscan'), set_config('enable_seqscan', 'off', true)"
        )
        (before, _) = cursor.fetchone()
        cursor.execute(f"{where} LIMIT %s", [pattern, limit])
        ids = [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT set_config('enable_seqscan', %s, true)", [before])
    return ids


def _sqlite_ids(sql: str, text: str, limit: int) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(sql, [f"%{text}%", limit])
        return [row[0] for row in cursor.fetchall()]


def _sqlite_indexable(text: str) -> bool:
    """Whether FTS5's trigram index answers `LIKE '%text%'` as LIKE would: no wildcard in the
    text, and three characters at least (SQLite 3.40 finds nothing for a shorter text of three
    bytes or more, such as one CJK character; the index would read itself whole anyway)."""
    return len(text) >= TRIGRAM and not any(mark in text for mark in LIKE_WILDCARDS)
