"""Characters are compared in their usual width: a normalised text and an entity key fold the
Halfwidth and Fullwidth Forms and the ideographic space into the characters they stand for
(`dedup.policy.text.fold`). An input method for Chinese, Japanese or Korean types "ＡＷＳ",
"Ｓ３" or "ﾊﾞｹｯﾄ" where another writer types "AWS", "S3" or "バケット": the same words, which a
near duplicate's comparison counted as other characters (no link at all) and an entity's key as
another name.

Every drawer whose text holds such a character gets its normalised text, fingerprint and index
text again, and every entity and alias its key (and key length) and signatures, by dedup 0017's
machinery (imported: the same rows, batches and rules of what is written again) with these
characters instead of marks. The reverse computes them by the rules before (held here). Links,
mentions and decisions made before stay as they were; a text and its full-width twin stored
before are linked by the next sweep.

Stop the web and worker processes before migrating (README, Deploy).
"""

import importlib
import unicodedata

import regex
from django.db import migrations

marks_in_words = importlib.import_module("dedup.migrations.0017_marks_in_words")

OTHER_WIDTH = "\u3000\uff00-\uffef"
# The rules before (0017's): NFC and casefold, marks kept on letters, no width folded.
_PREVIOUS_NOT_WORD = regex.compile(
    r"[^\p{Alphabetic}\p{N}\p{M}]+(?:\p{M}+[^\p{Alphabetic}\p{N}\p{M}]*)*"
)
_PREVIOUS_KEY_DROPPED = regex.compile(r"[.'\u2019]")
_PREVIOUS_KEY_SEPARATOR = regex.compile(
    r"[^\p{Alphabetic}\p{N}\p{M}+#]+(?:\p{M}+[^\p{Alphabetic}\p{N}\p{M}+#]*)*"
)
_PREVIOUS_LEADING_MARKS = regex.compile(r"^[\p{M}\s]+")


def _previous_normalize_text(text):
    folded = unicodedata.normalize("NFC", text).casefold()
    return _PREVIOUS_LEADING_MARKS.sub("", _PREVIOUS_NOT_WORD.sub(" ", folded).strip())


def _previous_entity_key(name):
    folded = unicodedata.normalize("NFC", name).casefold()
    key = _PREVIOUS_KEY_SEPARATOR.sub(" ", _PREVIOUS_KEY_DROPPED.sub("", folded)).strip()
    return _PREVIOUS_LEADING_MARKS.sub("", key) or folded.strip()


def _compute(apps, schema_editor, normalize, key_of, pairs):
    from dedup import policy
    from dedup.policy.signatures import key_signatures

    connection = schema_editor.connection
    marks_in_words._drawers(apps, connection, normalize, policy, OTHER_WIDTH, pairs)
    marks_in_words._keys(apps, connection, key_of, key_signatures, OTHER_WIDTH)


def usual_widths(apps, schema_editor):
    from dedup import policy

    _compute(apps, schema_editor, policy.normalize_text, policy.entity_key, pairs=True)


def other_widths(apps, schema_editor):
    # Index texts as before dedup 0019 too: its reverse ran first.
    _compute(apps, schema_editor, _previous_normalize_text, _previous_entity_key, pairs=False)


class Migration(migrations.Migration):
    dependencies = [
        ("dedup", "0017_marks_in_words"),
    ]

    operations = [migrations.RunPython(usual_widths, other_widths)]
