"""The SQLite full-text table gains the drawer's room (a `room_id` column), so a candidate query
matches the room inside the index instead of reading every room's matches and filtering them after.

The table and its triggers are dropped and created again, then rebuilt from palace_drawer (an
existing database's index is filled anew: seconds per 100,000 drawers). The reverse puts back the
table of 0002. PostgreSQL: the GIN index covers every drawer, not only current ones (so the
candidate lookup names no column another partial index could serve); the reverse restores it.

A migration is history: this file holds the SQL it ran, as text, and imports no project code.
palace/fulltext.py is today's definition; tests/dedup/test_migrations.py checks that migrating
installs it.
"""

from django.db import migrations


class RunSQLOn(migrations.RunSQL):
    """RunSQL on one database vendor only: the other has its own statements or needs none."""

    def __init__(self, vendor, sql, reverse_sql):
        super().__init__(sql, reverse_sql, elidable=False)
        self.vendor = vendor

    def deconstruct(self):
        return (self.__class__.__name__, [self.vendor, self.sql, self.reverse_sql], {})

    def _run_sql(self, schema_editor, sqls):
        if schema_editor.connection.vendor == self.vendor:
            super()._run_sql(schema_editor, sqls)


REMOVE = [
    "DROP TRIGGER IF EXISTS palace_drawer_fts_update",
    "DROP TRIGGER IF EXISTS palace_drawer_fts_delete",
    "DROP TRIGGER IF EXISTS palace_drawer_fts_insert",
    "DROP TABLE IF EXISTS palace_drawer_fts",
]

# Today's table, with the room.
SQLITE = [
    """
    CREATE VIRTUAL TABLE IF NOT EXISTS palace_drawer_fts USING fts5(
        room_id,
        normalized_content,
        content='palace_drawer',
        content_rowid='id',
        tokenize='unicode61 remove_diacritics 0',
        detail=column
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

# The table of 0002, which the reverse restores.
PREVIOUS_SQLITE = [
    """
    CREATE VIRTUAL TABLE IF NOT EXISTS palace_drawer_fts USING fts5(
        normalized_content,
        content='palace_drawer',
        content_rowid='id',
        tokenize='unicode61 remove_diacritics 0',
        detail=column
    )
    """,
    """
    CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_insert AFTER INSERT ON palace_drawer BEGIN
        INSERT INTO palace_drawer_fts(rowid, normalized_content)
        VALUES (new.id, new.normalized_content);
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_delete AFTER DELETE ON palace_drawer BEGIN
        INSERT INTO palace_drawer_fts(palace_drawer_fts, rowid, normalized_content)
        VALUES ('delete', old.id, old.normalized_content);
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_update
    AFTER UPDATE OF normalized_content ON palace_drawer BEGIN
        INSERT INTO palace_drawer_fts(palace_drawer_fts, rowid, normalized_content)
        VALUES ('delete', old.id, old.normalized_content);
        INSERT INTO palace_drawer_fts(rowid, normalized_content)
        VALUES (new.id, new.normalized_content);
    END
    """,
    "INSERT INTO palace_drawer_fts(palace_drawer_fts) VALUES ('rebuild')",
]

POSTGRESQL_REMOVE = "DROP INDEX IF EXISTS palace_drawer_fulltext"
POSTGRESQL = """
    CREATE INDEX IF NOT EXISTS palace_drawer_fulltext ON palace_drawer USING gin (
        to_tsvector('simple'::regconfig, left(normalized_content, 100000))
    ) WITH (fastupdate = off)
    """
PREVIOUS_POSTGRESQL = """
    CREATE INDEX IF NOT EXISTS palace_drawer_fulltext ON palace_drawer USING gin (
        to_tsvector('simple'::regconfig, left(normalized_content, 100000))
    ) WITH (fastupdate = off) WHERE valid_to IS NULL
    """


class Migration(migrations.Migration):
    dependencies = [("palace", "0010_entity_signatures")]

    operations = [
        RunSQLOn("sqlite", [*REMOVE, *SQLITE], [*REMOVE, *PREVIOUS_SQLITE]),
        RunSQLOn(
            "postgresql",
            [POSTGRESQL_REMOVE, POSTGRESQL],
            [POSTGRESQL_REMOVE, PREVIOUS_POSTGRESQL],
        ),
    ]
