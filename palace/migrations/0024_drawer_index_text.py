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

A migration is history and imports no project code: the SQL it runs is 0015's triggers, as that
migration holds them, with the terms' column replaced, and its index statements as text here.
palace/fulltext.py is today's definition; tests/dedup/test_migrations.py checks that migrating
installs it.
"""

import importlib
import re

from django.db import migrations, models

ROOM_TERMS = importlib.import_module("palace.migrations.0015_drawer_fulltext_room_terms")
RunSQLOn = ROOM_TERMS.RunSQLOn

DROP_TRIGGERS = ROOM_TERMS.REMOVE[:3]  # the three triggers; the FTS5 table stays as it is
PREVIOUS_TRIGGERS = ROOM_TERMS.SQLITE[1:4]


def indexed(trigger):
    """0015's trigger with a row's terms made of its index text where it has one, and the
    update trigger firing on that column too."""
    trigger = re.sub(
        r"\b(new|old)\.normalized_content\b",
        r"coalesce(\1.index_text, \1.normalized_content)",
        trigger,
    )
    return trigger.replace(
        "AFTER UPDATE OF room_id, normalized_content ON",
        "AFTER UPDATE OF room_id, normalized_content, index_text ON",
    )


SQLITE = [*DROP_TRIGGERS, *map(indexed, PREVIOUS_TRIGGERS)]
PREVIOUS_SQLITE = [*DROP_TRIGGERS, *PREVIOUS_TRIGGERS]


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
