#!/usr/bin/env python
"""Entity resolution benchmark: a mention resolved through the mention service, per rule,
against a plain insert of the rows a new mention writes (an entity and a mention, no
resolution), interleaved in one run, at 10,000 / 100,000 / 1,000,000 entities on SQLite and
PostgreSQL. Also the size of the signature index against the entity table's, and a page of `?name=`
from the trigram indexes against the scan it replaced.

    .venv/bin/python bench/entities.py [--sizes 10000,100000,1000000] [--rounds 200] [--parts 1]

--parts 1 also prints where each rule's time goes (bench/_parts.py), timing every statement and
the commit: the headline times then include those timers, so measure them without it.

The store is filled by bulk SQL (COPY on PostgreSQL, executemany on SQLite) with exactly the
rows the services would write: entities with their keys and signatures, aliases (one entity in
ten has a convergence's, one in a hundred a person's, with its signatures).
"""

from __future__ import annotations

import contextlib
import json
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import (
    arguments,
    fresh_database_url,
    percentile,
    request_end,
    run_children,
    setup_django,
    table,
)
from bench._entity_fill import entity_name, grow, typo
from bench._name_search import SEARCHES, name_searches
from bench._parts import Parts, part_names, trimmed_means

RULES = [
    "exact name",
    "key variant",
    "one typo",
    "two typos",
    "new name",
    "new name, no kind",
    "plain insert",
]
SEED = 14

# Where a call's time goes (--parts 1: bench/_parts.py): each statement it runs, by the first of
# these its text holds, the commit, and the rest (Python: the service, the policy, the ORM's
# objects, computing the signatures).
PARTS = [
    ("BEGIN", "begin"),
    ("castellan_entity_lookup", "lookups' call"),
    ("palace_entitykeyband", "key bands"),
    (" AS asked ", "signature lookup"),
    ("LEFT JOIN palace_entityalias", "exact lookups"),
    ("redirect_to_id IS NULL", "entities in reach"),
    ("WITH e AS", "entity, signatures, links"),
    ("palace_entitysignature", "signatures"),
    ("palace_entitylink", "links"),
    ("palace_entityalias", "alias"),
    ("palace_mention", "mention"),
    ("palace_entity", "entity"),
]
PART_NAMES = part_names(PARTS)


def sizes_mb() -> tuple[float, float]:
    """The entity table's size and the signature index's (tables and their indexes), in MB."""
    from django.db import connection

    def total(names: tuple[str, ...]) -> float:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute(
                    "SELECT sum(pg_total_relation_size(c)) FROM unnest(%s::regclass[]) c",
                    [list(names)],
                )
            else:
                like = " OR ".join("name = %s OR tbl_name = %s" for _ in names)
                cursor.execute(
                    "SELECT sum(pgsize) FROM dbstat WHERE name IN (SELECT name FROM "
                    f"sqlite_master WHERE {like})",
                    [n for name in names for n in (name, name)],
                )
            return float(cursor.fetchone()[0]) / 1e6

    return total(("palace_entity",)), total(
        ("palace_entitysignature", "palace_entityaliassignature")
    )


# --- the measurement -------------------------------------------------------------------------


def operations(rng: random.Random, drawers: list, count: int) -> dict:
    """Each rule's call, prepared: a function that picks what the sighting names (untimed) and
    returns the call to time, a sighting that resolves by the rule through the mention service."""
    from dedup import policy, services
    from palace.models import Entity, Mention

    def pick() -> Entity:
        while True:
            entity = Entity.objects.only("name", "kind", "key").get(pk=rng.randint(1, count))
            if len(entity.key) >= 10:
                return entity

    def mention(name: str, kind: str) -> None:
        services.mention_add(drawer=rng.choice(drawers), name=name, kind=kind)

    def plain() -> None:
        from django.db import transaction

        name = entity_name(rng) + " " + uuid.uuid4().hex[:6]
        key = policy.entity_key(name)
        with transaction.atomic():
            entity = Entity.objects.create(name=name, kind="tool", key=key, key_length=len(key))
            Mention.objects.create(drawer=rng.choice(drawers), entity=entity)

    def with_entity(spell):
        def prepare():
            entity = pick()
            name = spell(entity)
            return lambda: mention(name, entity.kind)

        return prepare

    def new_name(kind: str):
        def prepare():
            name = entity_name(rng) + " " + uuid.uuid4().hex[:6]
            return lambda: mention(name, kind)

        return prepare

    return {
        "exact name": with_entity(lambda e: e.name),
        "key variant": with_entity(lambda e: e.name.upper() + "."),
        "one typo": with_entity(lambda e: typo(e.name, rng, 1)),
        "two typos": with_entity(lambda e: typo(e.name, rng, 2)),
        "new name": new_name("tool"),
        "new name, no kind": new_name("other"),
        "plain insert": lambda: plain,
    }


def measure(size: int, rounds: int, rng: random.Random, with_parts: bool = False) -> dict:
    """Interleaved: each round runs every rule once, in a random order; only the service call
    (or the plain insert) is timed, not picking the entity it names. `with_parts`: where each
    call's time goes too (`bench._parts`, whose timers the times then include)."""
    from django.db import connection

    from bench._common import drawer_row
    from dedup import services
    from palace.models import Drawer

    room = services.room_get_or_create(wing="bench", room="entities")
    drawers = Drawer.objects.bulk_create(drawer_row(room, f"drawer {i}") for i in range(50))
    calls = operations(rng, drawers, size)
    timings: dict[str, list[float]] = {rule: [] for rule in RULES}
    cpu: dict[str, list[float]] = {rule: [] for rule in RULES}
    parts: dict[str, list[dict[str, float]]] = {rule: [] for rule in RULES}
    after: list[float] = []  # each call's request end, untimed (`request_end`)
    spent = Parts(PARTS) if with_parts else None
    # Not `spent or ...`: a Parts is a dict, and an empty one is false.
    with spent if spent is not None else contextlib.nullcontext():
        for _ in range(rounds):
            order = list(RULES)
            rng.shuffle(order)
            for rule in order:
                call = calls[rule]()
                if spent is not None:
                    spent.clear()
                wall, process = timed(call)
                after.append(request_end())
                timings[rule].append(wall)
                cpu[rule].append(process)
                if spent is not None:
                    parts[rule].append(spent.with_rest(wall))
    entity_mb, index_mb = sizes_mb()
    searches = name_searches(rng, size, max(rounds // 4, 20))
    resolved = [t for rule in RULES[:-1] for t in timings[rule]]
    return {
        "backend": connection.vendor,
        "entities": size,
        **{rule: statistics.median(timings[rule]) * 1000 for rule in RULES},
        "cpu": {rule: statistics.median(cpu[rule]) * 1000 for rule in RULES},
        "parts": {rule: trimmed_means(timings[rule], parts[rule], PART_NAMES) for rule in RULES}
        if with_parts
        else None,
        "p99": percentile(resolved, 0.99) * 1000,
        "after_ms": statistics.mean(after) * 1000,
        "after_max_ms": max(after) * 1000,
        "searches": searches,
        "entity_mb": entity_mb,
        "index_mb": index_mb,
    }


def timed(call) -> tuple[float, float]:
    """The wall time and this process's CPU time of the call alone (the entity it names is
    picked before the clocks start). On a loaded machine the wall time of a longer call is
    inflated more (it is preempted more often); the CPU time is not, but on PostgreSQL it leaves
    out the server's work."""
    started, started_cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - started, time.process_time() - started_cpu


def child(backend: str, sizes: list[int], rounds: int, with_parts: bool) -> None:
    setup_django(fresh_database_url(backend))
    rng = random.Random(SEED)
    taken: set = set()
    from palace.models import Entity

    for size in sizes:
        # The new names and plain inserts of a measurement made entities of their own.
        grow(
            size,
            Entity.objects.order_by("-pk").values_list("pk", flat=True).first() or 0,
            rng,
            taken,
        )
        print(json.dumps(measure(size, rounds, rng, with_parts)), flush=True)


def main() -> None:
    args = arguments(__doc__, sizes="10000,100000,1000000", rounds=200, parts=0)
    if args.child:
        child(args.child, args.sizes, args.rounds, bool(args.parts))
        return
    rows, cpu_rows, part_rows, after_rows, search_rows = [], [], [], [], []
    for row in run_children(__file__, args.backends):
        after = f"{row['after_ms']:.2f} / {row['after_max_ms']:.1f}"
        after_rows.append(f"{row['backend']} {row['entities']:,}: {after}")
        for rule in RULES if row["parts"] else ():
            spent = row["parts"][rule]
            part_rows.append(
                [
                    f"{row['entities']:,}",
                    row["backend"],
                    rule,
                    f"{sum(spent.values()):.2f}",
                    *(f"{spent[name]:.2f}" if spent[name] >= 0.005 else "" for name in PART_NAMES),
                ]
            )
        search_rows.append(
            [
                f"{row['entities']:,}",
                row["backend"],
                *(f"{row['searches'][label]:.2f}" for label in SEARCHES),
            ]
        )
        cpu_rows.append(
            [f"{row['entities']:,}", row["backend"], *(f"{row['cpu'][r]:.2f}" for r in RULES)]
        )
        worst = max(row[rule] for rule in RULES[:-1])
        rows.append(
            [
                f"{row['entities']:,}",
                row["backend"],
                *(f"{row[rule]:.2f}" for rule in RULES),
                f"{worst / row['plain insert']:.2f}x",
                f"{row['p99']:.1f}",
                f"{row['index_mb']:.0f} / {row['entity_mb']:.0f} MB"
                f" ({row['index_mb'] / row['entity_mb']:.1f}x)",
            ]
        )
    headers = ["entities", "backend", *RULES, "worst / plain", "p99 ms", "index / entities"]
    print(table(headers, rows))
    print("\nAfter each call, untimed, a request's end (SQLite: the log's checkpoint when due),")
    print("mean / max ms: " + ", ".join(after_rows))
    print("\nA page of `?name=` (50 entities), median ms: indexed, and by the scan before")
    print(table(["entities", "backend", *SEARCHES], search_rows))
    print("\nCPU time of this process, median ms:")
    print(table(["entities", "backend", *RULES], cpu_rows))
    if part_rows:
        print(
            "\nWhere the time goes: mean ms of each part over the calls but the slowest tenth "
            "(statements timed around Django's cursor; the rest is Python; the times above "
            "include these timers):"
        )
        print(table(["entities", "backend", "rule", "mean", *PART_NAMES], part_rows))


if __name__ == "__main__":
    main()
