"""PostgreSQL: the full-text GIN index built again over `castellan_drawer_terms(room_id,
coalesce(index_text, normalized_content))`, the drawer's index text where it has one (0024).
`CONCURRENTLY`, outside a transaction: writes go on while it reads the table (about a minute per
million drawers here); it waits for the transactions open when it starts. It is built under a
new name, then the old index is dropped (concurrently) and the new one takes its name; run
again after an interruption, it starts over (an index left invalid is dropped first). Until
dedup's 0016 installs the candidate functions over the new expression, they find no index to
use: run both in one `migrate`, with the processes stopped (README, Deploy). SQLite: nothing.

The reverse builds 0015's index (over the normalised text) the same way.

A migration is history and imports no project code: this file holds the SQL it runs, as text.
palace/fulltext.py is today's definition; tests/dedup/test_migrations.py checks that migrating
installs it.
"""

import importlib

from django.db import migrations

RunSQLOn = importlib.import_module("palace.migrations.0015_drawer_fulltext_room_terms").RunSQLOn


def index_over(text):
    """The statements that build the index over `text` and give it the index's name."""
    return [
        "DROP INDEX CONCURRENTLY IF EXISTS palace_drawer_fulltext_next",
        "CREATE INDEX CONCURRENTLY palace_drawer_fulltext_next ON palace_drawer USING gin ("
        f"castellan_drawer_terms(room_id, {text})) WITH (fastupdate = off)",
        "DROP INDEX CONCURRENTLY IF EXISTS palace_drawer_fulltext",
        "ALTER INDEX palace_drawer_fulltext_next RENAME TO palace_drawer_fulltext",
    ]


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY runs outside a transaction

    dependencies = [
        ("palace", "0024_drawer_index_text"),
    ]

    operations = [
        RunSQLOn(
            "postgresql",
            index_over("coalesce(index_text, normalized_content)"),
            index_over("normalized_content"),
        ),
    ]
