"""PostgreSQL's full-text index gains the drawer's room: a GIN index over (room_id + 0, tsvector),
the room's key by the `btree_gin` extension (a trusted extension: the database owner may create
it). The candidate lookup's `room_id + 0 = p_room` is then matched inside the index, ANDing the
room's posting list with its words', so it reads only the room's matches instead of every room's
and filtering them after (a common word pair had read 365,761 postings to keep 726 in a store of
500 rooms). The room is keyed as `room_id + 0`, an expression no b-tree serves, so the lookup
keeps this index as its only plan whatever the statistics. The old index, on the tsvector alone,
is dropped (the new one keeps its name; nothing else used it). SQLite: nothing (its FTS5 table
got the room in 0011).

Building the index locks writes to palace_drawer for its duration (about a minute per million
drawers on a small machine). The reverse puts back the index of 0011 and drops the extension.

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


# As django.contrib.postgres's BtreeGinExtension, whose reverse would query pg_extension on SQLite.
EXTENSION = "CREATE EXTENSION IF NOT EXISTS btree_gin"
EXTENSION_REMOVE = "DROP EXTENSION IF EXISTS btree_gin"
REMOVE = "DROP INDEX IF EXISTS palace_drawer_fulltext"
POSTGRESQL = """
    CREATE INDEX IF NOT EXISTS palace_drawer_fulltext ON palace_drawer USING gin (
        (room_id + 0), to_tsvector('simple'::regconfig, left(normalized_content, 100000))
    ) WITH (fastupdate = off)
    """
PREVIOUS_POSTGRESQL = """
    CREATE INDEX IF NOT EXISTS palace_drawer_fulltext ON palace_drawer USING gin (
        to_tsvector('simple'::regconfig, left(normalized_content, 100000))
    ) WITH (fastupdate = off)
    """


class Migration(migrations.Migration):
    dependencies = [("palace", "0012_entity_signature_keys")]

    operations = [
        RunSQLOn(
            "postgresql",
            [EXTENSION, REMOVE, POSTGRESQL],
            [REMOVE, PREVIOUS_POSTGRESQL, EXTENSION_REMOVE],
        ),
    ]
