"""Search finds a Korean word with its particles and endings written onto it ("서울" in "서울에서",
in Seoul; "회의" in "회의를"): an index text holds, after each Korean word of three syllables or
more, the word's pairs of syllables (`dedup.policy.index_text`, `hangul_runs`), which a search
for a word of two syllables or more asks. Before, a search found a Korean word only where a
drawer held it bare, and a word of two syllables not at all (words of two characters are not
asked).

Every drawer whose normalised text holds a Korean syllable gets its index text again (a Korean
text had none: its words were its own); the policy decides. The reverse takes the pairs off
again (`index_text(hangul=False)`). Stop the web, worker and mcp processes before migrating
(README, Deploy): a process of the release before would go on writing Korean drawers without
pairs (`manage.py dedup_backfill` mends those, giving an index text to every drawer that lacks
one; not a drawer of Korean and Chinese or Japanese, which has one: `migrate dedup 0019` then
`migrate` mends it).
"""

import importlib

from django.db import migrations

character_pairs = importlib.import_module("dedup.migrations.0019_character_pairs")


def _without_korean_pairs(normalized):
    """The index text of the rules before: dedup 0019's, without Korean words' pairs."""
    from dedup import policy

    return policy.index_text(normalized, hangul=False)


def with_korean_pairs(apps, schema_editor):
    from dedup import policy

    character_pairs._index_texts(
        apps, schema_editor, policy.index_text, characters=policy.HANGUL_SYLLABLES
    )


def without_korean_pairs(apps, schema_editor):
    from dedup import policy

    character_pairs._index_texts(
        apps, schema_editor, _without_korean_pairs, characters=policy.HANGUL_SYLLABLES
    )


class Migration(migrations.Migration):
    dependencies = [
        ("dedup", "0019_character_pairs"),
    ]

    operations = [migrations.RunPython(with_korean_pairs, without_korean_pairs)]
