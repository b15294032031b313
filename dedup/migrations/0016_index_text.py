"""Texts in scripts written without spaces get their index words (palace's 0024 `index_text`),
and the PostgreSQL functions that read the full-text index ask it over the new expression (the
index of palace's 0025).

PostgreSQL: `castellan_drawer_candidates`, `castellan_sweep_candidates` and `castellan_words_held`
are those of 0010 and 0014 with one change: a drawer's document is
`castellan_drawer_terms(m.room_id, coalesce(m.index_text, m.normalized_content))`, the expression
palace's 0025 indexes (a lookup uses the index only through the very same expression). The
reverse puts back 0010's and 0014's.

Both databases: every drawer whose normalised text holds a letter of such a script (Chinese,
Japanese, Thai, Lao, Khmer, Burmese, Tibetan) gets its `index_text` from `dedup.policy`, as the
write path gives a new drawer (its full-text terms follow: SQLite's update trigger, PostgreSQL's
index expression). The rows are found by a range of code points covering those scripts' letters
(tests/dedup/policy/test_index_text.py checks that it does), and the policy decides. The reverse
empties the column.

A migration is history and imports no live project code, but for the values it computes, which
come from `dedup.policy` as 0001's do (see there): an index text is only useful if it equals what
the write path computes. The SQL of the functions is 0010's and 0014's text, as those migrations
hold it, with the document's expression replaced.
"""

import importlib

from django.db import migrations
from tqdm import tqdm

WITHOUT_JIT = importlib.import_module("dedup.migrations.0010_candidates_functions_without_jit")
WORDS_HELD = importlib.import_module("dedup.migrations.0014_words_held_function")
RunSQLOn = WITHOUT_JIT.RunSQLOn

NORMALIZED_DOCUMENT = "castellan_drawer_terms(m.room_id, m.normalized_content)"
INDEXED_DOCUMENT = "castellan_drawer_terms(m.room_id, coalesce(m.index_text, m.normalized_content))"


def indexed(sql):
    assert NORMALIZED_DOCUMENT in sql
    return sql.replace(NORMALIZED_DOCUMENT, INDEXED_DOCUMENT)


FUNCTION = indexed(WITHOUT_JIT.FUNCTION)
SWEEP_FUNCTION = indexed(WITHOUT_JIT.SWEEP_FUNCTION)
WORDS_FUNCTION = indexed(WORDS_HELD.FUNCTION)
PREVIOUS_FUNCTION = WITHOUT_JIT.FUNCTION
FORWARD = [
    *WITHOUT_JIT.DROP_SIGNATURES,
    FUNCTION,
    WITHOUT_JIT.SWEEP_REMOVE,
    SWEEP_FUNCTION,
    WORDS_HELD.REMOVE,
    WORDS_FUNCTION,
]
REVERSE = [
    *WITHOUT_JIT.DROP_SIGNATURES,
    PREVIOUS_FUNCTION,
    WITHOUT_JIT.SWEEP_REMOVE,
    WITHOUT_JIT.SWEEP_FUNCTION,
    WORDS_HELD.REMOVE,
    WORDS_HELD.FUNCTION,
]

# Every letter of the unspaced scripts lies in these ranges of code points (more lie there too:
# the policy decides): Thai to Myanmar, Khmer, CJK (from the iteration mark) and kana, Myanmar's
# extensions, compatibility ideographs, halfwidth kana, and the supplementary planes' kana,
# Tangut, Khitan, counting rods and ideographs.
UNSPACED_RANGES = [
    (0x0E00, 0x10FF),
    (0x1780, 0x17FF),
    (0x3000, 0x9FFF),
    (0xA9E0, 0xAA7F),
    (0xF900, 0xFAFF),
    (0xFF00, 0xFFEF),
    (0x11600, 0x116FF),
    (0x16FE0, 0x16FFF),
    (0x17000, 0x18DFF),
    (0x1AFF0, 0x1B2FF),
    (0x1D360, 0x1D37F),
    (0x20000, 0x3FFFF),
]
BATCH_SIZE = 1000


def _may_hold_unspaced(vendor):
    """A condition on `normalized_content`, and its parameter, true of every text holding such
    a letter."""
    ranges = "".join(f"{chr(low)}-{chr(high)}" for low, high in UNSPACED_RANGES)
    if vendor == "postgresql":
        return "normalized_content ~ %s", f"[{ranges}]"
    return "normalized_content GLOB %s", f"*[{ranges}]*"


def fill_index_text(apps, schema_editor):
    from dedup import policy

    drawer_model = apps.get_model("palace", "Drawer")
    condition, pattern = _may_hold_unspaced(schema_editor.connection.vendor)
    sql = (
        f"SELECT id, normalized_content FROM palace_drawer WHERE id > %s AND {condition} "
        "ORDER BY id LIMIT %s"
    )
    last_id = 0
    # On a terminal only (disable=None): the drawers looked at, those of the scripts' ranges.
    progress = tqdm(desc="index texts", unit=" drawers", disable=None)
    while True:
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(sql, [last_id, pattern, BATCH_SIZE])
            rows = cursor.fetchall()
        if not rows:
            progress.close()
            return
        progress.update(len(rows))
        changed = [
            drawer_model(id=pk, index_text=indexed)
            for pk, normalized in rows
            if (indexed := policy.index_text(normalized)) is not None
        ]
        drawer_model.objects.bulk_update(changed, ["index_text"])
        last_id = rows[-1][0]


def empty_index_text(apps, schema_editor):
    apps.get_model("palace", "Drawer").objects.exclude(index_text=None).update(index_text=None)


class Migration(migrations.Migration):
    dependencies = [
        ("dedup", "0015_entity_lookup_banded_function"),
        ("palace", "0025_drawer_index_text_postgresql"),
    ]

    operations = [
        RunSQLOn("postgresql", FORWARD, REVERSE),
        migrations.RunPython(fill_index_text, empty_index_text),
    ]
