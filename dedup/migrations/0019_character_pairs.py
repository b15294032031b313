"""Search finds a word of a script written without spaces anywhere in a sentence: an index text
holds, after the pieces of each such run of three or more, the run's pairs of neighbouring
characters (`dedup.policy.index_text`, `character_pairs`), which a search for a word asks. A
sentence's pieces alone held a word only where a piece happened to be that word.

Every drawer whose normalised text holds a character of those scripts' ranges (as dedup 0016
found them, by dedup 0017's batches) gets its index text again; the policy decides. The reverse
takes the pairs off again. Stop the web and worker processes before migrating (README, Deploy):
a process of the release before would go on writing index texts without pairs, whose drawers
search would not find by a word inside a sentence (`manage.py dedup_backfill` does not mend
those; `migrate dedup 0018` then `migrate` does).
"""

import importlib

from django.db import migrations

marks_in_words = importlib.import_module("dedup.migrations.0017_marks_in_words")


def _index_texts(apps, schema_editor, index_text, characters=None):
    """Every drawer whose text holds one of `characters` (by default those of the scripts
    written without spaces; dedup 0020 asks Korean syllables) gets `index_text` of its text."""
    from dedup import policy

    drawer_model = apps.get_model("palace", "Drawer")
    connection = schema_editor.connection
    rows = marks_in_words._rows(
        connection,
        "palace_drawer",
        "normalized_content",
        ", index_text",
        characters or policy.UNSPACED_CHARACTERS,
    )
    for batch in rows:
        changed = [
            drawer_model(id=pk, index_text=indexed)
            for pk, normalized, stored in batch
            if (indexed := index_text(normalized)) != stored
        ]
        drawer_model.objects.bulk_update(changed, ["index_text"])


def _without_pairs(normalized):
    """The index text of the rules before: the policy's, without pairs."""
    from dedup import policy

    return policy.index_text(normalized, pairs=False)


def with_pairs(apps, schema_editor):
    from dedup import policy

    _index_texts(apps, schema_editor, policy.index_text)


def without_pairs(apps, schema_editor):
    _index_texts(apps, schema_editor, _without_pairs)


class Migration(migrations.Migration):
    dependencies = [
        ("dedup", "0018_usual_widths"),
    ]

    operations = [migrations.RunPython(with_pairs, without_pairs)]
