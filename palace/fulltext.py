"""The full-text index over drawers' normalised text, for lexical duplicate candidates.

SQLite: an external-content FTS5 table kept in step by triggers (accents kept, as in the policy;
detail=column, since candidate queries need no phrase positions and smaller doclists make the AND
of words several times cheaper).
PostgreSQL: a GIN index on the 'simple' tsvector of the normalised text (no stemming, no stop
words), the exact expression `dedup.candidates` queries with. fastupdate is off: with it on, every
search also reads the unsorted pending list, which on a write-heavy table costs milliseconds.

`install` is idempotent. On SQLite, a migration that makes Django rebuild `palace_drawer` (adding
a column with a default does) drops the triggers with the old table: such a migration must call
`install` again at its end.
"""

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
