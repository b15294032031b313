#!/usr/bin/env python
"""Entity sweep benchmark: what a sweep of the entities costs, at growing sizes, on SQLite and
PostgreSQL.

First, ms per entity of the sweep's lookups for the store's newest entities (those with the most
older ones), three ways interleaved batch by batch: a batch at a time (`candidates.older_lookups`,
as sweeps read), one entity at a time by the write path's own hand-written lookups
(`entities_named`, then `owners_within_reach` and `entities_of_owners`), and one entity at a time
by the ORM queries sweeps made before (`entities_matching`, `entities_within_reach`, then the
aliases of what they found). Then, up to --whole entities, the whole sweep
run by 1 to --workers `manage.py db_worker --batch` processes (the run planned into its parts of
50,000 ids), from the moment the workers start until the last exits, and whether they proposed
the same pairs as one worker.

    .venv/bin/python bench/entity_sweep.py [--sizes 10000,100000,1000000] [--workers 2]
        [--whole 100000] [--backends sqlite,postgresql]

The store is bench/entities.py's (bench/_entity_fill.py: COPY on PostgreSQL, executemany on
SQLite, exactly the rows the services write: entities with their keys and signatures, aliases).
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import arguments, fresh_database_url, run_children, setup_django, table
from bench._entity_fill import grow
from bench.sweep import _workers_sweep

READ = 2000  # entities whose lookups are timed both ways


def lookup_costs(read: int = READ) -> dict:
    """ms per entity of the newest `read` entities' lookups, batched and one by one."""
    from dedup import candidates
    from palace.models import Entity
    from review.services.sweep_scan import BATCH

    newest = list(Entity.objects.filter(redirect_to__isnull=True).order_by("-pk")[:read])
    newest.reverse()
    spent = {"batched": 0.0, "single": 0.0, "orm": 0.0}
    found = {"batched": 0, "single": 0}
    for start in range(0, len(newest), BATCH):
        chunk = newest[start : start + BATCH]
        started = time.perf_counter()
        with candidates.entity_lookups():
            lookups = candidates.older_lookups(chunk)
        spent["batched"] += time.perf_counter() - started
        found["batched"] += sum(len(x.named) + len(x.reached) for x in lookups.values())
        started = time.perf_counter()
        with candidates.entity_lookups():
            for entity in chunk:
                found["single"] += len(_alone(entity))
        spent["single"] += time.perf_counter() - started
        started = time.perf_counter()
        with candidates.entity_lookups():
            for entity in chunk:
                _by_the_orm(entity)
        spent["orm"] += time.perf_counter() - started
    costs = {f"{way}_ms": 1000 * seconds / len(newest) for way, seconds in spent.items()}
    return costs | {"same_count": found["batched"] == found["single"]}


def _alone(entity) -> list:
    """The older entities the write path's lookups find for one entity's name."""
    from dedup import candidates

    named = candidates.entities_named(kind=entity.kind, name=entity.name, key=entity.key)
    named = [known for known in named if known.entity.pk < entity.pk]
    if named:
        return named
    entity_ids, alias_ids = candidates.owners_within_reach(entity.key)
    reached = candidates.entities_of_owners(
        kind=entity.kind, entity_ids=entity_ids, alias_ids=alias_ids
    )
    return [known for known in reached if known.entity.pk < entity.pk]


def _by_the_orm(entity) -> None:
    """What a sweep read for one entity before `older_lookups`: two ORM queries for the older
    entities (by the exact lookups, and within reach of its key), then their aliases."""
    from dedup import candidates
    from palace.models import EntityAlias

    pool = {
        e.pk: e
        for query in (
            candidates.entities_matching(kind=entity.kind, name=entity.name, key=entity.key),
            candidates.entities_within_reach(kind=entity.kind, key=entity.key),
        )
        for e in query.filter(pk__lt=entity.pk)
    }
    list(EntityAlias.objects.filter(entity_id__in=pool).values_list("entity_id", "alias"))


def whole_sweeps(size: int, most: int) -> list[dict]:
    """The whole entity sweep by 1 to `most` workers."""
    from review.models import Proposal, SweepRun
    from review.services import sweep_parts
    from review.services import sweeps as sweep_services
    from review.tasks import run_sweep_part

    rows, first = [], None
    for workers in range(1, most + 1):
        Proposal.objects.all().delete()  # else the second run proposes nothing new
        SweepRun.objects.all().delete()
        run = sweep_services.start(threshold=0.9, entities=True)
        for part in sweep_parts.plan(run):
            run_sweep_part.enqueue(part.pk)
        seconds, cpu = _workers_sweep(workers)
        run.refresh_from_db()
        proposed = set(run.proposals.values_list("newer_entity", "older_entity"))
        first = proposed if first is None else first
        rows.append(
            {"workers": workers, "seconds": seconds, "cpu": cpu, "status": run.status}
            | {"done": run.done, "parts": run.parts.count()}
            | {"proposals": len(proposed), "same": proposed == first}
        )
    return rows


def child(backend: str, sizes: list[int], most: int, whole: int) -> None:
    setup_django(fresh_database_url(backend))
    from django.db import connection

    rng, present = random.Random(14), 0
    taken: set[tuple[str, str]] = set()
    for size in sizes:
        started = time.perf_counter()
        grow(size, present, rng, taken)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        present = size
        row = {"backend": backend, "size": size, "fill_seconds": time.perf_counter() - started}
        row |= lookup_costs()
        row["sweeps"] = whole_sweeps(size, most) if size <= whole else []
        print(json.dumps(row), flush=True)


def main() -> None:
    args = arguments(__doc__, sizes="10000,100000,1000000", workers=2, whole=100000)
    if args.child:
        child(args.child, args.sizes, args.workers, args.whole)
        return
    costs, sweeps = [], []
    for row in run_children(__file__, args.backends):
        name = [f"{row['size']:,}", row["backend"]]
        costs.append(
            [
                *name,
                f"{row['batched_ms']:.3f}",
                f"{row['single_ms']:.3f}",
                f"{row['orm_ms']:.3f}",
                f"{row['orm_ms'] / row['batched_ms']:.1f}x",
                str(row["same_count"]),
                f"{row['fill_seconds']:.0f}",
            ]
        )
        for run in row["sweeps"]:
            rate = run["done"] / run["seconds"]
            sweeps.append(
                [
                    *name,
                    str(run["workers"]),
                    str(run["parts"]),
                    f"{run['seconds']:.1f}",
                    f"{rate:,.0f}",
                    f"{run['cpu']:.1f}",
                    str(run["proposals"]),
                    str(run["same"]),
                    run["status"],
                ]
            )
    headers = ["entities", "backend", "batched ms", "one by one ms", "before (ORM) ms"]
    headers += ["before / batched", "same found"]
    print(f"Lookups of the newest {READ:,} entities, ms per entity:")
    print(table([*headers, "fill s"], costs))
    if sweeps:
        print("\nThe whole entity sweep, by workers:")
        headers = ["entities", "backend", "workers", "parts", "seconds", "entities/s"]
        print(table([*headers, "worker CPU s", "proposals", "same as 1", "status"], sweeps))


if __name__ == "__main__":
    main()
