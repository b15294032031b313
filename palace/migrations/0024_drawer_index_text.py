"""A drawer's `index_text`: the words the full-text index holds where they are not its normalised
text's (a sentence of Chinese, Japanese or Thai, one "word" of the normalised text, cut into
pieces; null for every other text). The index takes its terms from it where it is set.

This migration adds the column and, on SQLite, drops the FTS5 triggers and creates them again
over `coalesce(index_text, normalized_content)`, the update trigger firing on `index_text` too,
in one transaction. No row's terms change here (every index_text is null until dedup's 0016
fills them, through the update trigger). PostgreSQL's index is built again by 0025, outside a
transaction. Stop the web and worker processes before migrating (README, Deploy).

The reverse puts back 0015's triggers and drops the column.

A migration is history and imports no project code: the SQL it runs is 0015's triggers, as that
migration holds them, with the terms' column replaced. palace/fulltext.py is today's definition;
tests/dedup/test_migrations.py checks that migrating installs it.
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
    trigger, replaced = re.subn(
        r"\b(new|old)\.normalized_content\b",
        r"coalesce(\1.index_text, \1.normalized_content)",
        trigger,
    )
    assert replaced >= 2, trigger  # each of a row's terms names its text twice
    updated = "AFTER UPDATE OF room_id, normalized_content ON"
    if "AFTER UPDATE" in trigger:
        assert updated in trigger, trigger
    return trigger.replace(updated, "AFTER UPDATE OF room_id, normalized_content, index_text ON")


SQLITE = [*DROP_TRIGGERS, *map(indexed, PREVIOUS_TRIGGERS)]
PREVIOUS_SQLITE = [*DROP_TRIGGERS, *PREVIOUS_TRIGGERS]


class Migration(migrations.Migration):
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
    ]
