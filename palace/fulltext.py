"""The full-text index over drawers' normalised text, for lexical duplicate candidates.

SQLite: an external-content FTS5 table kept in step by triggers (accents kept, as in the policy;
detail=column, since candidate queries need no phrase positions and smaller doclists make the AND
of words several times cheaper).
PostgreSQL: a GIN index on the drawer's room and the 'simple' tsvector of the normalised text (no
stemming, no stop words), the exact expressions `dedup.candidates` queries with. The room's key
comes from the `btree_gin` extension, so a lookup asking `room_id + 0 = p_room` ANDs the room's
posting list with its words' inside the index and reads only that room's matches. The room is
indexed as the expression `room_id + 0`, which no b-tree serves: the lookup has this index as its
only plan, whatever the statistics say (with `room_id` itself, a planner that believed a room
small, as after analysing an empty table, read the whole room through a b-tree instead). It
covers every drawer (not only current ones: a partial index would let the planner pick other
partial indexes for the lookup, see `dedup.candidates.drawers.POSTGRESQL_FUNCTION`). fastupdate
is off: with it on, every search also reads the unsorted pending list, which on a write-heavy
table costs milliseconds.

This module is the live definition: the query code uses its expressions, and
tests/dedup/test_migrations.py checks that what the migrations installed is what it defines.
Migrations never import it: each holds its own copy of the SQL it ran, so changing this module
never changes what an old migration did. A change here needs a new migration; so does a migration
that makes Django rebuild `palace_drawer` on SQLite (adding a column with a default does), since
the rebuild drops the triggers with the old table: it must end by creating them again (copy
`SQLITE` into it, as palace's migration 0003 does). `install` is idempotent.
"""

# PostgreSQL: the text search configuration and the document of a drawer. A query uses the GIN
# index only when it matches with this very expression, so the index and every query build it here.
POSTGRESQL_CONFIG = "'simple'::regconfig"
# The room as the full-text index keys it (see above): a lookup says `m.room_id + 0 = p_room`.
POSTGRESQL_ROOM = "room_id + 0"
POSTGRESQL_MAX_CHARACTERS = 100000


def postgresql_document(column: str = "normalized_content") -> str:
    """The tsvector expression the GIN index is built on, over `column` (qualify it with the
    alias a query gives `palace_drawer`)."""
    return f"to_tsvector({POSTGRESQL_CONFIG}, left({column}, {POSTGRESQL_MAX_CHARACTERS}))"


def postgresql_query(text: str) -> str:
    """The tsquery expression of `text` (an SQL expression: a parameter or a variable)."""
    return f"to_tsquery({POSTGRESQL_CONFIG}, {text})"


# SQLite: accents kept (as in the policy); no phrase positions (detail=column).
SQLITE_TOKENIZE = "unicode61 remove_diacritics 0"
SQLITE_DETAIL = "column"


def sqlite_match(words: list[str], room: int | None = None) -> str:
    """The FTS5 query of drawers holding every word (in their text), in `room` if given: the
    room's id is a column of the index, so the room is matched inside it. Quoting keeps FTS5
    from reading a word as an operator such as AND or NEAR."""
    text = " AND ".join(f'"{word}"' for word in words)
    match = f"normalized_content : ({text})"
    return match if room is None else f'room_id : "{int(room)}" AND {match}'


SQLITE = [
    f"""
    CREATE VIRTUAL TABLE IF NOT EXISTS palace_drawer_fts USING fts5(
        room_id,
        normalized_content,
        content='palace_drawer',
        content_rowid='id',
        tokenize='{SQLITE_TOKENIZE}',
        detail={SQLITE_DETAIL}
    )
    """,
    """
    CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_insert AFTER INSERT ON palace_drawer BEGIN
        INSERT INTO palace_drawer_fts(rowid, room_id, normalized_content)
        VALUES (new.id, new.room_id, new.normalized_content);
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_delete AFTER DELETE ON palace_drawer BEGIN
        INSERT INTO palace_drawer_fts(palace_drawer_fts, rowid, room_id, normalized_content)
        VALUES ('delete', old.id, old.room_id, old.normalized_content);
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_update
    AFTER UPDATE OF room_id, normalized_content ON palace_drawer BEGIN
        INSERT INTO palace_drawer_fts(palace_drawer_fts, rowid, room_id, normalized_content)
        VALUES ('delete', old.id, old.room_id, old.normalized_content);
        INSERT INTO palace_drawer_fts(rowid, room_id, normalized_content)
        VALUES (new.id, new.room_id, new.normalized_content);
    END
    """,
    "INSERT INTO palace_drawer_fts(palace_drawer_fts) VALUES ('rebuild')",
]
SQLITE_REMOVE = [
    "DROP TRIGGER IF EXISTS palace_drawer_fts_update",
    "DROP TRIGGER IF EXISTS palace_drawer_fts_delete",
    "DROP TRIGGER IF EXISTS palace_drawer_fts_insert",
    "DROP TABLE IF EXISTS palace_drawer_fts",
]
POSTGRESQL = [
    "CREATE EXTENSION IF NOT EXISTS btree_gin",
    f"""
    CREATE INDEX IF NOT EXISTS palace_drawer_fulltext ON palace_drawer USING gin (
        ({POSTGRESQL_ROOM}), {postgresql_document()}
    ) WITH (fastupdate = off)
    """,
]
POSTGRESQL_REMOVE = ["DROP INDEX IF EXISTS palace_drawer_fulltext"]
SQLITE_TRIGGERS = {
    "palace_drawer_fts_insert",
    "palace_drawer_fts_delete",
    "palace_drawer_fts_update",
}


def _run(statements_by_vendor):
    def apply(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return apply


install = _run({"sqlite": SQLITE, "postgresql": POSTGRESQL})
remove = _run({"sqlite": SQLITE_REMOVE, "postgresql": POSTGRESQL_REMOVE})
