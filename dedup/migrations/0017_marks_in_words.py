"""A letter's marks are its own: a normalised text and an entity key keep the marks on letters
(category M: a Thai tone mark, a Devanagari virama or nukta, a combining accent NFC leaves
apart), where they used to separate words. "ป่า" (forest) and "ป้า" (aunt) were the same
normalised word, so two texts differing only there were linked "normalized" (similarity 1.0),
and two such names converged on one entity by their key.

Every drawer whose text has such a mark gets its normalised text, fingerprint and index text
again, and every entity and alias its key (and key length), with the signatures of a changed
key written again (those of an alias only where a person recorded it, as the write path does).
Rows are found by a character at or past U+0300 (every mark is) or one of the two below it whose
casefold makes a mark ("İ", "ǰ"), and the policy decides; a key that would outgrow its column
stays as it was (the write path refuses such a name). The
reverse computes them again by the rules before, held here (`_previous_normalize_text`,
`_previous_entity_key`). Links, mentions and decisions made before stay as they were.

Like 0001, 0004 and 0011, it asks the pure `dedup.policy` for the values rather than a frozen
copy: a derived column is only useful if it equals what the write path computes for new rows.
Stop the web and worker processes before migrating (README, Deploy): a process of the release
before would go on writing the old forms.
"""

import unicodedata

import regex
from django.db import migrations
from tqdm import tqdm

BATCH_SIZE = 1000
# Every text whose normalised form or key holds a mark has one of these characters: the marks
# (all at or past U+0300), and the two below it whose casefold makes one ("İ" is "i" and a dot
# above, "ǰ" is "j" and a caron).
MAY_HOLD_MARKS = "\u0130\u01f0\u0300-\U0010ffff"
KEY_MAX_LENGTH = 200  # palace_entity.key, palace_entityalias.key
PERSON_ALIAS_SOURCES = ("api", "curator")
# The rules before: every character that is not a letter (Alphabetic) or a number separated words.
_PREVIOUS_NOT_WORD = regex.compile(r"[^\p{Alphabetic}\p{N}]+")
_PREVIOUS_KEY_DROPPED = regex.compile(r"[.'\u2019]")
_PREVIOUS_KEY_SEPARATOR = regex.compile(r"[^\p{Alphabetic}\p{N}+#]+")


def _previous_normalize_text(text):
    return _PREVIOUS_NOT_WORD.sub(" ", unicodedata.normalize("NFC", text).casefold()).strip()


def _previous_entity_key(name):
    folded = unicodedata.normalize("NFC", name).casefold()
    key = _PREVIOUS_KEY_SEPARATOR.sub(" ", _PREVIOUS_KEY_DROPPED.sub("", folded)).strip()
    return key or folded.strip()


def _rows(connection, table, column, extra="", characters=MAY_HOLD_MARKS):
    """(id, column, ...) of the rows whose `column` has one of `characters` (a character class's
    inside: by default those at or past U+0300 and the two that make a mark), in batches by id.
    dedup 0018 asks for other characters."""
    if connection.vendor == "postgresql":
        condition, pattern = f"{column} ~ %s", f"[{characters}]"
    else:
        condition, pattern = f"{column} GLOB %s", f"*[{characters}]*"
    last_id = 0
    # On a terminal only (disable=None): the rows looked at.
    progress = tqdm(desc=table, unit=" rows", disable=None)
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, {column}{extra} FROM {table} WHERE id > %s AND {condition} "
                "ORDER BY id LIMIT %s",
                [last_id, pattern, BATCH_SIZE],
            )
            batch = cursor.fetchall()
        if not batch:
            progress.close()
            return
        progress.update(len(batch))
        yield batch
        last_id = batch[-1][0]


def _drawers(apps, connection, normalize, policy, characters=MAY_HOLD_MARKS, pairs=True):
    """`pairs`: whether index texts hold pairs of characters (dedup 0019's rule); a reverse
    computes them without (the rules before 0019)."""
    drawer_model = apps.get_model("palace", "Drawer")
    rows = _rows(connection, "palace_drawer", "content", ", normalized_content", characters)
    for batch in rows:
        changed = []
        for pk, content, stored in batch:
            normalized = normalize(content)
            if normalized != stored:
                changed.append(
                    drawer_model(
                        id=pk,
                        normalized_content=normalized,
                        fingerprint=policy.fingerprint_of_normalized(normalized),
                        index_text=policy.index_text(normalized, pairs),
                    )
                )
        fields = ["normalized_content", "fingerprint", "index_text"]
        drawer_model.objects.bulk_update(changed, fields)


def _keys(apps, connection, key_of, key_signatures, characters=MAY_HOLD_MARKS):
    owners = (
        ("Entity", "palace_entity", "name", "", "EntitySignature", "entity_id"),
        (
            "EntityAlias",
            "palace_entityalias",
            "alias",
            ", source",
            "EntityAliasSignature",
            "alias_id",
        ),
    )
    for model_name, table, column, extra, signature_name, owner in owners:
        model = apps.get_model("palace", model_name)
        signature_model = apps.get_model("palace", signature_name)
        for batch in _rows(connection, table, column, f", key{extra}", characters):
            # A key grown past its column (every mark kept where a run of them was one space)
            # stays as it was: the write path refuses such a name as bad input from now on.
            changed = [
                (row[0], key, row)
                for row in batch
                if (key := key_of(row[1])) != row[2] and len(key) <= KEY_MAX_LENGTH
            ]
            if not changed:
                continue
            rows = [model(id=pk, key=key) for pk, key, _ in changed]
            fields = ["key"]
            if model_name == "Entity":
                for row in rows:
                    row.key_length = len(row.key)
                fields.append("key_length")
            model.objects.bulk_update(rows, fields)
            signed = [
                (pk, key)
                for pk, key, row in changed
                if model_name == "Entity" or row[3] in PERSON_ALIAS_SOURCES
            ]
            signature_model.objects.filter(**{f"{owner}__in": [pk for pk, _ in signed]}).delete()
            signature_model.objects.bulk_create(
                signature_model(signature=signature, **{owner: pk}, key=key)
                for pk, key in signed
                for signature in key_signatures(key)
            )


def marks_in_words(apps, schema_editor):
    from dedup import policy
    from dedup.policy.signatures import key_signatures

    connection = schema_editor.connection
    _drawers(apps, connection, policy.normalize_text, policy)
    _keys(apps, connection, policy.entity_key, key_signatures)


def marks_separating(apps, schema_editor):
    from dedup import policy
    from dedup.policy.signatures import key_signatures

    connection = schema_editor.connection
    _drawers(apps, connection, _previous_normalize_text, policy, pairs=False)
    _keys(apps, connection, _previous_entity_key, key_signatures)


class Migration(migrations.Migration):
    dependencies = [
        ("dedup", "0016_index_text"),
    ]

    operations = [migrations.RunPython(marks_in_words, marks_separating)]
