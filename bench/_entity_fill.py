"""The entity store bench/entities.py measures (and bench/_queue_fill.py reuses): made-up names,
their typos, and a bulk fill (COPY on PostgreSQL, executemany on SQLite) with exactly the rows
the services would write: entities with their keys and signatures, aliases (one entity in ten
has a convergence's, one in a hundred a person's, with its signatures)."""

from __future__ import annotations

import random
import uuid

from bench._common import Vocabulary, settle

KINDS = ["person", "tool", "project", "place", "org"]


def entity_name(rng: random.Random) -> str:
    """A made-up name of one to three words, like a person's, a tool's or a project's."""
    words = rng.choices([1, 2, 3], weights=[3, 5, 2])[0]
    return " ".join(
        "".join(rng.choice(Vocabulary.SYLLABLES) for _ in range(rng.randint(2, 4))).capitalize()
        for _ in range(words)
    )


def typo(name: str, rng: random.Random, edits: int) -> str:
    """`edits` letter edits (swap, drop, replace, insert) at distinct places of the name."""
    chars = list(name)
    for position in sorted(rng.sample(range(1, len(chars) - 2), edits), reverse=True):
        kind = rng.choice(["swap", "drop", "replace", "insert"])
        if kind == "swap":
            chars[position], chars[position + 1] = chars[position + 1], chars[position]
        elif kind == "drop":
            del chars[position]
        elif kind == "replace":
            chars[position] = "q" if chars[position] != "q" else "z"
        else:
            chars.insert(position, "x")
    return "".join(chars)


def new_rows(start: int, count: int, rng: random.Random, taken: set) -> tuple[list, list]:
    """Entity rows (id, name, kind, key) and alias rows (id, entity, alias, key, source)."""
    from dedup import policy

    entities: list[tuple] = []
    aliases: list[tuple] = []
    while len(entities) < count:
        name, kind = entity_name(rng), rng.choice(KINDS)
        if (name, kind) in taken or len(policy.entity_key(name)) < 4:
            continue
        taken.add((name, kind))
        entity_id = start + len(entities) + 1
        entities.append((entity_id, name, kind, policy.entity_key(name)))
        roll = rng.random()
        if roll < 0.11:
            alias = name.upper() if roll < 0.1 else entity_name(rng)
            source = "convergence" if roll < 0.1 else "api"
            aliases.append((entity_id, entity_id, alias, policy.entity_key(alias), source))
    return entities, aliases


def signature_rows(entities: list, aliases: list) -> tuple[list, list]:
    from dedup.policy.signatures import key_signatures

    by_entity = [(s, e[0], e[3]) for e in entities for s in key_signatures(e[3])]
    by_alias = [
        (s, a[0], a[3]) for a in aliases if a[4] != "convergence" for s in key_signatures(a[3])
    ]
    return by_entity, by_alias


def insert(table_name: str, columns: tuple[str, ...], rows: list) -> None:
    from django.db import connection

    if connection.vendor == "postgresql":
        with (
            connection.cursor() as cursor,
            cursor.cursor.copy(f"COPY {table_name} ({', '.join(columns)}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(row)
        return
    marks = ", ".join("%s" for _ in columns)
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {table_name} ({', '.join(columns)}) VALUES ({marks})", rows
        )


def grow(target: int, present: int, rng: random.Random, taken: set) -> None:
    from django.db import connection, transaction

    now = "2026-11-30 00:00:00+00:00"
    if connection.vendor == "sqlite":  # the fill alone: no journal, no sync (a crash loses it)
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode=OFF")
            cursor.execute("PRAGMA synchronous=OFF")
    for start in range(present, target, 100_000):
        entities, aliases = new_rows(start, min(100_000, target - start), rng, taken)
        by_entity, by_alias = signature_rows(entities, aliases)
        with transaction.atomic():
            insert(
                "palace_entity",
                ("id", "uuid", "name", "kind", "key", "key_length", "redirect_kind", "created_at"),
                [(i, str(uuid.uuid4()), n, k, key, len(key), "", now) for i, n, k, key in entities],
            )
            insert(
                "palace_entityalias",
                ("id", "entity_id", "alias", "key", "source", "created_at"),
                [(*row, now) for row in aliases],
            )
            insert("palace_entitysignature", ("signature", "entity_id", "key"), by_entity)
            insert("palace_entityaliassignature", ("signature", "alias_id", "key"), by_alias)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            for name in ("palace_entity", "palace_entityalias"):
                cursor.execute(
                    f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                    f"(SELECT max(id) FROM {name}))"
                )
            # As autovacuum leaves a table: the visibility map an index-only scan relies on.
            cursor.execute("VACUUM ANALYZE")
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode=WAL")  # as the app's connections run it
        cursor.execute("PRAGMA synchronous=NORMAL")
    # As `dedup_maintain` leaves a store after a bulk load: the FTS5 tables' segments merged
    # (the name search's; one a transaction otherwise), analysed, and the log written back, its
    # checkpoint's `fsync` writing out the load too (unsynced above, it had been left to the
    # first request's checkpoint: a second, untimed, at 1,000,000 entities).
    settle()
