"""SQLite: the full-text table holds one term per word and room ("word·room"), so a candidate
lookup reads only its room's postings of each word, not every room's (the room used to be a column
matched beside the words, whose postings span the whole table). Its tokenizer becomes `ascii`, so
a term is a normalised word whatever its script (unicode61 split a word at a vowel sign, which
FTS5 then refused as a phrase). The table is contentless and keeps no phrase positions and no
document sizes.

The table and its triggers are dropped and created again, and the new table is filled from
palace_drawer (seconds per 100,000 drawers). The reverse puts back the table of 0011, rebuilt
from palace_drawer.

PostgreSQL: the GIN index is built on the same terms, made by the function
`castellan_drawer_terms` (the words as they are, through `array_to_tsvector`: no parser, no
dictionary, so whatever the database's locale the lexemes are the normalised words), instead of
the room's key (`btree_gin`) beside the words' tsvector, whose posting lists spanned every room.
Building it locks writes to palace_drawer for its duration (about a minute per million drawers on
a small machine). `btree_gin` is no longer used and is dropped. The reverse puts back the index
of 0013 and its extension.

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

# A drawer's terms: each word followed by a middle dot and the room's id.
NEW_TERMS = (
    "CASE WHEN new.normalized_content = '' THEN '' ELSE replace(new.normalized_content, ' ', "
    "'\u00b7' || new.room_id || ' ') || '\u00b7' || new.room_id END"
)
OLD_TERMS = NEW_TERMS.replace("new.", "old.")
TERMS = NEW_TERMS.replace("new.", "")

SQLITE = [
    """
    CREATE VIRTUAL TABLE IF NOT EXISTS palace_drawer_fts USING fts5(
        terms,
        content='',
        columnsize=0,
        tokenize='ascii',
        detail=none
    )
    """,
    f"""
    CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_insert AFTER INSERT ON palace_drawer BEGIN
        INSERT INTO palace_drawer_fts(rowid, terms) VALUES (new.id, {NEW_TERMS});
    END
    """,
    f"""
    CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_delete AFTER DELETE ON palace_drawer BEGIN
        INSERT INTO palace_drawer_fts(palace_drawer_fts, rowid, terms)
        VALUES ('delete', old.id, {OLD_TERMS});
    END
    """,
    f"""
    CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_update
    AFTER UPDATE OF room_id, normalized_content ON palace_drawer BEGIN
        INSERT INTO palace_drawer_fts(palace_drawer_fts, rowid, terms)
        VALUES ('delete', old.id, {OLD_TERMS});
        INSERT INTO palace_drawer_fts(rowid, terms) VALUES (new.id, {NEW_TERMS});
    END
    """,
    f"INSERT INTO palace_drawer_fts(rowid, terms) SELECT id, {TERMS} FROM palace_drawer",
]

# The table of 0011 (the room a column beside the words), which the reverse restores.
PREVIOUS_SQLITE = [
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


POSTGRESQL_REMOVE = "DROP INDEX IF EXISTS palace_drawer_fulltext"
POSTGRESQL_FUNCTION = """
CREATE OR REPLACE FUNCTION castellan_drawer_terms(p_room bigint, p_text text)
RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
    v_text text := rtrim(left(p_text, 100000), ' ');
    v_mark text := '·' || p_room;
    v_terms text[] := '{}';
    v_word text;
BEGIN
    IF v_text = '' THEN
        RETURN ''::tsvector;
    END IF;
    IF octet_length(v_text) <= 2000 THEN
        RETURN array_to_tsvector(
            string_to_array(replace(v_text, ' ', v_mark || ' ') || v_mark, ' '));
    END IF;
    FOREACH v_word IN ARRAY string_to_array(v_text, ' ') LOOP
        IF octet_length(v_word) <= 2000 THEN
            v_terms := v_terms || (v_word || v_mark);
        END IF;
    END LOOP;
    RETURN array_to_tsvector(v_terms);
END
$$
"""
POSTGRESQL_FUNCTION_REMOVE = "DROP FUNCTION IF EXISTS castellan_drawer_terms(bigint, text)"
POSTGRESQL = """
    CREATE INDEX IF NOT EXISTS palace_drawer_fulltext ON palace_drawer USING gin (
        castellan_drawer_terms(room_id, normalized_content)
    ) WITH (fastupdate = off)
    """
EXTENSION = "CREATE EXTENSION IF NOT EXISTS btree_gin"
EXTENSION_REMOVE = "DROP EXTENSION IF EXISTS btree_gin"
# The index of 0013, which the reverse restores.
PREVIOUS_POSTGRESQL = """
    CREATE INDEX IF NOT EXISTS palace_drawer_fulltext ON palace_drawer USING gin (
        (room_id + 0), to_tsvector('simple'::regconfig, left(normalized_content, 100000))
    ) WITH (fastupdate = off)
    """


class Migration(migrations.Migration):
    dependencies = [("palace", "0014_queue_by_rule")]

    operations = [
        RunSQLOn("sqlite", [*REMOVE, *SQLITE], [*REMOVE, *PREVIOUS_SQLITE]),
        RunSQLOn(
            "postgresql",
            [POSTGRESQL_REMOVE, EXTENSION_REMOVE, POSTGRESQL_FUNCTION, POSTGRESQL],
            [POSTGRESQL_REMOVE, POSTGRESQL_FUNCTION_REMOVE, EXTENSION, PREVIOUS_POSTGRESQL],
        ),
    ]
