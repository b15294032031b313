"""A drawer's `index_text`: the words the full-text index holds where they are not its normalised
text's (a sentence of Chinese, Japanese or Thai, one "word" of the normalised text, cut into
pieces; null for every other text). Both indexes take their terms from it where it is set:

SQLite: the FTS5 triggers are dropped and created again over `coalesce(index_text,
normalized_content)`, and the update trigger fires on `index_text` too. No row's terms change
here (every index_text is null until dedup's 0016 fills them, through the update trigger).

PostgreSQL: the GIN index is built again over `castellan_drawer_terms(room_id,
coalesce(index_text, normalized_content))`, concurrently (writes go on), under a new name, then
the old index is dropped (concurrently) and the new one takes its name. Until dedup's 0016
installs the candidate functions over the new expression, a write's full-text lookup finds no
index to use: run both in one `migrate`.

The reverse puts back 0015's triggers and index, and drops the column.

A migration is history: this file holds the SQL it ran, as text, and imports no project code.
palace/fulltext.py is today's definition; tests/dedup/test_migrations.py checks that migrating
installs it.
"""

from django.db import migrations, models


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


DROP_TRIGGERS = [
    "DROP TRIGGER IF EXISTS palace_drawer_fts_update",
    "DROP TRIGGER IF EXISTS palace_drawer_fts_delete",
    "DROP TRIGGER IF EXISTS palace_drawer_fts_insert",
]


def triggers(terms, updated_columns):
    """The three triggers, `terms` the SQL of a row's terms over `{row}` (new or old)."""
    new, old = terms.format(row="new"), terms.format(row="old")
    return [
        f"""
        CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_insert AFTER INSERT ON palace_drawer BEGIN
            INSERT INTO palace_drawer_fts(rowid, terms) VALUES (new.id, {new});
        END
        """,
        f"""
        CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_delete AFTER DELETE ON palace_drawer BEGIN
            INSERT INTO palace_drawer_fts(palace_drawer_fts, rowid, terms)
            VALUES ('delete', old.id, {old});
        END
        """,
        f"""
        CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_update
        AFTER UPDATE OF {updated_columns} ON palace_drawer BEGIN
            INSERT INTO palace_drawer_fts(palace_drawer_fts, rowid, terms)
            VALUES ('delete', old.id, {old});
            INSERT INTO palace_drawer_fts(rowid, terms) VALUES (new.id, {new});
        END
        """,
    ]


# A drawer's terms: each word of its index text (else its normalised text) followed by a middle
# dot and the room's id.
INDEXED = "coalesce({row}.index_text, {row}.normalized_content)"
TERMS = (
    f"CASE WHEN {INDEXED} = '' THEN '' ELSE replace({INDEXED}, ' ', "
    "'\u00b7' || {row}.room_id || ' ') || '\u00b7' || {row}.room_id END"
)
# 0015's: of the normalised text.
PREVIOUS_TERMS = (
    "CASE WHEN {row}.normalized_content = '' THEN '' ELSE replace({row}.normalized_content, ' ', "
    "'\u00b7' || {row}.room_id || ' ') || '\u00b7' || {row}.room_id END"
)

SQLITE = [*DROP_TRIGGERS, *triggers(TERMS, "room_id, normalized_content, index_text")]
PREVIOUS_SQLITE = [*DROP_TRIGGERS, *triggers(PREVIOUS_TERMS, "room_id, normalized_content")]


def gin_index(name, text):
    return (
        f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON palace_drawer USING gin ("
        f"castellan_drawer_terms(room_id, {text})) WITH (fastupdate = off)"
    )


def index_renamed(text):
    return [
        "DROP INDEX CONCURRENTLY IF EXISTS palace_drawer_fulltext_next",
        gin_index("palace_drawer_fulltext_next", text),
        "DROP INDEX CONCURRENTLY IF EXISTS palace_drawer_fulltext",
        "ALTER INDEX palace_drawer_fulltext_next RENAME TO palace_drawer_fulltext",
    ]


POSTGRESQL = index_renamed("coalesce(index_text, normalized_content)")
PREVIOUS_POSTGRESQL = index_renamed("normalized_content")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY runs outside a transaction

    dependencies = [
        ("palace", "0023_audit_batch"),
    ]

    operations = [
        migrations.AddField(
            model_name="drawer",
            name="index_text",
            field=models.TextField(
                blank=True,
                editable=False,
                help_text="The words the full-text index holds, where they are not the "
                "normalised text's.",
                null=True,
            ),
        ),
        RunSQLOn("sqlite", SQLITE, PREVIOUS_SQLITE),
        RunSQLOn("postgresql", POSTGRESQL, PREVIOUS_POSTGRESQL),
    ]
