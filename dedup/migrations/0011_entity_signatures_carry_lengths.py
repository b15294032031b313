"""Data migration: every entity's and person-recorded alias's signatures computed again, in the
form of dedup.policy.signatures whose tags no longer carry the key's length: its low byte does,
so a lookup asks a third as many signatures, each a short range of the index.

Like dedup/0004, it asks the pure `dedup.policy` for the values rather than a frozen copy: a
signature is only useful if it equals what the write path computes for new rows. The reverse
puts back the signatures of the form before, from the copy of that form held here
(`_previous_key_signatures`). The tables' schema is unchanged.

The two forms do not mix: a process of the release before still serving while this runs writes
signatures of the form before, which the new lookups never find. Stop the web and worker
processes before migrating (README, Upgrading); `manage.py dedup_backfill --signatures`
computes every signature again if some were written meanwhile.

It reads the owners in batches of their ids and writes each batch in one statement (COPY on
PostgreSQL), with a progress bar on a terminal: a store of 1,000,000 entities took 5 minutes on
SQLite on this project's 2-core machine (16 million signatures).
"""

import hashlib

from django.db import migrations
from tqdm import tqdm

BATCH_SIZE = 5000
TABLES = (
    # signature table, owner column, owner table, which owners have signatures
    ("palace_entitysignature", "entity_id", "palace_entity", ""),
    (
        "palace_entityaliassignature",
        "alias_id",
        "palace_entityalias",
        " AND source IN ('api', 'curator')",
    ),
)


def _fill(connection, signatures):
    with connection.cursor() as cursor:
        for table, owner, owner_table, which in TABLES:
            # TRUNCATE on PostgreSQL: a DELETE would leave every old row dead beside the new
            # ones, twice the table and index until a VACUUM FULL. SQLite's DELETE without WHERE
            # truncates already.
            emptied = "TRUNCATE" if connection.vendor == "postgresql" else "DELETE FROM"
            cursor.execute(f"{emptied} {table}")
            cursor.execute(f"SELECT count(*) FROM {owner_table} WHERE key <> ''{which}")
            owners = cursor.fetchone()[0]
            # On a terminal only (disable=None), and not for an empty store.
            progress = tqdm(
                total=owners, desc=owner_table, unit=" keys", disable=None if owners else True
            )
            last_id = 0
            while True:
                cursor.execute(
                    f"SELECT id, key FROM {owner_table} WHERE id > %s AND key <> ''{which} "
                    "ORDER BY id LIMIT %s",
                    [last_id, BATCH_SIZE],
                )
                batch = cursor.fetchall()
                if not batch:
                    break
                rows = [
                    (signature, owner_id, key)
                    for owner_id, key in batch
                    for signature in signatures(key)
                ]
                _insert(connection, cursor, table, owner, rows)
                progress.update(len(batch))
                last_id = batch[-1][0]
            progress.close()


def _insert(connection, cursor, table, owner, rows):
    columns = f"signature, {owner}, key"
    if connection.vendor == "postgresql":
        with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        return
    cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES (%s, %s, %s)", rows)


def forward(apps, schema_editor):
    from dedup.policy.signatures import key_signatures

    _fill(schema_editor.connection, key_signatures)


def backward(apps, schema_editor):
    _fill(schema_editor.connection, _previous_key_signatures)


# The form before: a long key's pieces tagged with its length (as dedup/0004 computed them).
def _previous_key_signatures(key):
    n = len(key)
    if n <= 7:
        return _previous_pieces("F", key, 2)
    cut = n // 2
    return _previous_pieces(f"L{n}", key[:cut], 1) | _previous_pieces(f"R{n}", key[cut:], 1)


def _previous_pieces(tag, piece, depth):
    variants = frontier = {piece}
    for _ in range(depth):
        frontier = {v[:i] + v[i + 1 :] for v in frontier for i in range(len(v))}
        variants = variants | frontier
    return {
        int.from_bytes(
            hashlib.blake2b(
                f"{tag}\x1f{variant}".encode("utf-8", "surrogatepass"), digest_size=8
            ).digest(),
            "big",
            signed=True,
        )
        for variant in variants
    }


class Migration(migrations.Migration):
    dependencies = [
        ("dedup", "0010_candidates_functions_without_jit"),
        ("palace", "0012_entity_signature_keys"),  # the owner's key beside each signature
    ]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
