"""Full-text index over drawers' normalised text, for lexical duplicate candidates.

SQLite: an external-content FTS5 table kept in step by triggers (accents kept, as in the policy;
detail=column, since candidate queries need no phrase positions). PostgreSQL: a GIN index on the
'simple' tsvector of the normalised text, with fastupdate off.

A migration is history: this file holds the SQL it ran, as text, and imports no project code.
palace/fulltext.py is today's definition; tests/dedup/test_migrations.py checks that migrating
from zero installs it. (This is the SQL the migration has run since commit 3e1382c, which edited
it in place to add detail=column and fastupdate = off; a database migrated before that commit
holds the older objects.)
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


SQLITE = [
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
SQLITE_REMOVE = [
    "DROP TRIGGER IF EXISTS palace_drawer_fts_update",
    "DROP TRIGGER IF EXISTS palace_drawer_fts_delete",
    "DROP TRIGGER IF EXISTS palace_drawer_fts_insert",
    "DROP TABLE IF EXISTS palace_drawer_fts",
]
POSTGRESQL = [
    """
    CREATE INDEX IF NOT EXISTS palace_drawer_fulltext ON palace_drawer USING gin (
        to_tsvector('simple'::regconfig, left(normalized_content, 100000))
    ) WITH (fastupdate = off) WHERE valid_to IS NULL
    """,
]
POSTGRESQL_REMOVE = ["DROP INDEX IF EXISTS palace_drawer_fulltext"]


class Migration(migrations.Migration):
    dependencies = [("palace", "0001_initial")]

    operations = [
        RunSQLOn("sqlite", SQLITE, SQLITE_REMOVE),
        RunSQLOn("postgresql", POSTGRESQL, POSTGRESQL_REMOVE),
    ]
