#!/usr/bin/env python
"""Sweep benchmark: time and pairs compared by a consolidation sweep over one room of 10,000 and
100,000 drawers with planted duplicates, against an all-pairs comparison of the same room
(rapidfuzz cdist, OSA, measured on the 10,000 room and extrapolated beyond), and the recall of the
planted near duplicates compared with all-pairs.

    .venv/bin/python bench/sweep.py [--sizes 10000,100000] [--backends sqlite]

With --workers N, it instead sweeps each room with 1 to N `manage.py db_worker --batch` processes
(the sweep planned into parts of a tenth of the room, each part a task), from the moment the
workers start until the last exits (their start-up included), and checks they proposed the same
pairs as one worker.

    .venv/bin/python bench/sweep.py --workers 2 [--sizes 10000,100000]

--rooms R spreads each size over R rooms of one wing (a part per room when rooms are 10,000 or
fewer drawers), and --parts P queues only the run's first P parts and extrapolates the whole
run's time from theirs (said so in the table). Rooms are filled in bulk (`bulk_drawers`: COPY on
PostgreSQL, executemany on SQLite, exactly the rows the write path makes with deduplication off),
and the fill is timed.

    .venv/bin/python bench/sweep.py --workers 2 --sizes 1000000 --rooms 100 [--parts 10]

With BENCH_SWEEP_STORE=DIR (one size), the filled store is kept and reused by the next run with
the same size and rooms: SQLite's file in DIR, PostgreSQL's database (BENCH_POSTGRES_URL) left in
place, and the planted pairs in DIR as JSON. A reused store's fill time is the one measured when
it was filled. Drop the store yourself when done.
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import (
    PG_URL,
    ROOT,
    Vocabulary,
    arguments,
    bulk_drawers,
    fresh_database_url,
    one_typo,
    run_children,
    sentences,
    settle,
    setup_django,
    table,
)

PLANTED_SHARE = 0.01  # one drawer in a hundred is a one-typo variant of an earlier one


def build_room(size: int, rng: random.Random, *, wing: str = "bench", name: str = ""):
    """Drawers written while deduplication was off (bulk loaded: `bulk_drawers`), with planted
    variants; returns the room, the planted pairs (newer, older), the ids and the normalised
    texts in id order."""
    from dedup import policy, services

    vocabulary = Vocabulary(rng)
    room = services.room_get_or_create(wing=wing, room=name or f"room-{size}")
    texts: list[str] = []
    planted_at: dict[int, int] = {}
    fresh = sentences(vocabulary, size)
    for index in range(size):
        if index > 100 and rng.random() < PLANTED_SHARE:
            original = rng.randrange(index)
            while not typo_room(texts[original]):  # a typo goes in a word of five letters
                original = rng.randrange(index)
            texts.append(one_typo(texts[original], rng))
            planted_at[index] = original
        else:
            texts.append(next(fresh))
    ids = bulk_drawers(room.pk, texts)
    planted = {(ids[newer], ids[older]) for newer, older in planted_at.items()}
    return room, planted, ids, [policy.normalize_text(text) for text in texts]


def typo_room(text: str) -> bool:
    return any(len(word.strip(".")) >= 5 for word in text.split(" "))


def build_rooms(size: int, rooms: int, rng: random.Random):
    """`size` drawers over `rooms` rooms of a wing of their own (one in a hundred a planted variant,
    as in `build_room`), bulk loaded and settled; returns the wing, the planted pairs and the
    seconds the fill took (settling included)."""
    started = time.perf_counter()
    planted: set[tuple[int, int]] = set()
    wing = f"bench-{size}"
    for number in range(rooms):
        _, in_room, _, _ = build_room(size // rooms, rng, wing=wing, name=f"room-{number}")
        planted |= in_room
    settle()
    return wing, planted, time.perf_counter() - started


def all_pairs(texts: list[str], threshold: float):
    import numpy
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    started = time.perf_counter()
    scores = process.cdist(
        texts,
        texts,
        scorer=OSA.normalized_similarity,
        score_cutoff=threshold,
        dtype=numpy.float32,
        workers=-1,
    )
    seconds = time.perf_counter() - started
    found = {(int(i), int(j)) for i, j in zip(*numpy.nonzero(numpy.triu(scores, k=1)), strict=True)}
    return seconds, found


def child(backend: str, sizes: list[int], baseline_size: int) -> None:
    setup_django(fresh_database_url(backend))
    from dedup.maintenance import optimize_candidate_indexes
    from review.services import sweeps as sweep_services

    rng = random.Random(11)
    baseline = None
    for size in sizes:
        room, planted, ids, texts = build_room(size, rng)
        optimize_candidate_indexes()
        run = sweep_services.start(wing=room.wing.name, room=room.name, threshold=0.9)
        started = time.perf_counter()
        sweep_services.execute(run)
        seconds = time.perf_counter() - started
        proposed = set(run.proposals.values_list("newer_drawer", "older_drawer"))
        row = {
            "backend": backend,
            "size": size,
            "sweep_seconds": seconds,
            "compared": run.compared,
            "all_pairs": size * (size - 1) // 2,
            "planted": len(planted),
            "found": len(planted & proposed),
        }
        if size == baseline_size:
            cdist_seconds, similar = all_pairs(texts, 0.9)
            position = {pk: i for i, pk in enumerate(ids)}
            planted_indexes = {(position[n], position[o]) for n, o in planted}
            found_all = {(min(a, b), max(a, b)) for a, b in similar}
            planted_found_by_all = {p for p in planted_indexes if (min(p), max(p)) in found_all}
            baseline = cdist_seconds / (size * (size - 1) / 2)
            row |= {
                "all_pairs_seconds": cdist_seconds,
                "all_pairs_measured": True,
                "planted_by_all_pairs": len(planted_found_by_all),
            }
        elif baseline is not None:
            row |= {
                "all_pairs_seconds": baseline * size * (size - 1) / 2,
                "all_pairs_measured": False,
                "planted_by_all_pairs": len(planted),
            }
        print(json.dumps(row), flush=True)


def with_workers(backend: str, sizes: list[int], most: int, rooms: int, parts: int) -> None:
    """Each size over `rooms` rooms, swept by 1 to `most` workers. With `parts`, only the first
    `parts` parts of the run are queued, and the whole run's time is extrapolated from theirs."""
    store = os.environ.get("BENCH_SWEEP_STORE")
    assert not store or len(sizes) == 1, "a kept store holds one size"
    url = _store_url(backend, store, sizes[0], rooms) if store else fresh_database_url(backend)
    setup_django(url)
    from review.models import Proposal, SweepPart
    from review.services import sweep_parts
    from review.services import sweeps as sweep_services
    from review.tasks import run_sweep_part

    rng = random.Random(11)
    for size in sizes:
        wing, planted, fill_seconds = _filled(backend, store, size, rooms, rng)
        _clear_sweeps()
        fill = {"backend": backend, "size": size, "fill_seconds": fill_seconds}
        print(json.dumps(fill | candidate_costs(wing)), flush=True)
        sweep_parts.PART_SIZE = max(1, size // max(10, rooms))
        first: set | None = None
        for workers in range(1, most + 1):
            Proposal.objects.all().delete()  # else the second run proposes nothing new
            run = sweep_services.start(wing=wing, threshold=0.9)
            queued = sweep_parts.plan(run)[: parts or None]
            for part in queued:
                run_sweep_part.enqueue(part.pk)
            load = os.getloadavg()[0]
            seconds, cpu = _workers_sweep(workers)
            run.refresh_from_db()
            done = sum(SweepPart.objects.filter(run=run).values_list("done", flat=True))
            proposed = set(run.proposals.values_list("newer_drawer", "older_drawer"))
            first = proposed if first is None else first
            reach = {pair for pair in planted if _in_parts(pair[0], queued)}
            row = {"backend": backend, "size": size, "workers": workers, "seconds": seconds}
            row |= {"cpu": cpu, "load": (load, os.getloadavg()[0])}
            row |= {"status": run.status, "done": done, "total": run.total}
            row |= {"parts": len(queued), "all_parts": run.parts.count()}
            row |= {"same": proposed == first, "found": len(reach & proposed)}
            print(json.dumps(row | {"planted": len(reach)}), flush=True)


def _store_url(backend: str, store: str, size: int, rooms: int) -> str:
    if backend == "sqlite":
        return f"sqlite:///{Path(store) / f'sweep-{size}-{rooms}.sqlite3'}"
    if not (Path(store) / f"sweep-{backend}-{size}-{rooms}.json").exists():
        return fresh_database_url(backend)  # a store not filled yet: made afresh
    return PG_URL


def _filled(backend: str, store: str | None, size: int, rooms: int, rng: random.Random):
    """(wing, planted pairs, fill seconds): filled now, or read from the kept store."""
    kept = Path(store) / f"sweep-{backend}-{size}-{rooms}.json" if store else None
    if kept and kept.exists():
        saved = json.loads(kept.read_text())
        return saved["wing"], {tuple(pair) for pair in saved["planted"]}, saved["fill_seconds"]
    wing, planted, fill_seconds = build_rooms(size, rooms, rng)
    if kept:
        saved = {"wing": wing, "planted": sorted(planted), "fill_seconds": fill_seconds}
        kept.write_text(json.dumps(saved))
    return wing, planted, fill_seconds


def _clear_sweeps() -> None:
    """No sweep, proposal or queued task left by an earlier (maybe interrupted) run of a kept
    store."""
    from django_tasks_db.models import DBTaskResult

    from review.models import Proposal, SweepRun

    DBTaskResult.objects.all().delete()
    Proposal.objects.all().delete()
    SweepRun.objects.all().delete()


def candidate_costs(wing: str, drawers: int = 2000) -> dict:
    """ms per drawer of a sweep's candidate reads for the first `drawers` of the wing's first
    room: a batch at a time (`sweep_batch.for_texts`, as sweeps now read) and one drawer at a
    time (`candidates_for_text`, as they read before), interleaved batch by batch."""
    from dedup import candidates, policy
    from dedup.candidates import sweep_batch
    from dedup.candidates.sweep_rooms import Rooms
    from dedup.services import candidates_for_text
    from palace.models import Room
    from review.services.sweep_scan import BATCH

    scope = candidates.Scope(room=Room.objects.get(wing__name=wing, name="room-0"))
    rows = [
        (pk, policy.Text(content_hash, normalized, fingerprint))
        for pk, content_hash, normalized, fingerprint in scope.drawers()
        .order_by("pk")
        .values_list("pk", "content_hash", "normalized_content", "fingerprint")[:drawers]
    ]
    spent = {"batched": 0.0, "single": 0.0}
    groups = candidates.SWEEP_LEXICAL_GROUPS
    rooms = Rooms()  # as a part keeps its room from batch to batch
    for start in range(0, len(rows), BATCH):
        chunk = rows[start : start + BATCH]
        started = time.perf_counter()
        queries = [sweep_batch.query_of(pk, text, 0.9) for pk, text in chunk]
        sweep_batch.for_texts(scope, queries, groups=groups, rooms=rooms)
        spent["batched"] += time.perf_counter() - started
        started = time.perf_counter()
        for pk, text in chunk:
            alone = candidates.Scope(room=scope.room, exclude_id=pk)
            candidates_for_text(alone, text, threshold=0.9, groups=groups)
        spent["single"] += time.perf_counter() - started
    return {f"{way}_ms": 1000 * seconds / len(rows) for way, seconds in spent.items()}


def _workers_sweep(workers: int) -> tuple[float, float]:
    """Seconds from starting `workers` db_worker processes until the last exits (queue empty),
    and the CPU seconds the workers spent (user and system; not the PostgreSQL server's)."""
    command = [sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    processes = [
        subprocess.Popen([*command, "--no-reload"], cwd=ROOT, env=dict(os.environ))
        for _ in range(workers)
    ]
    for process in processes:
        process.wait()
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _in_parts(pk: int, parts) -> bool:
    return any(part.low_pk <= pk < part.high_pk for part in parts)


def workers_table(rows: list[dict]) -> str:
    fills = {(r["backend"], r["size"]): r["fill_seconds"] for r in rows if "fill_seconds" in r}
    return table(
        [
            *("backend", "drawers", "fill s", "parts swept", "workers", "status"),
            *("sweep s (swept)", "drawers/s", "whole run s", "worker CPU ms/drawer", "load"),
            *("same as 1", "planted found"),
        ],
        [
            [
                *(r["backend"], f"{r['size']:,}", f"{fills[(r['backend'], r['size'])]:.0f}"),
                *(f"{r['parts']}/{r['all_parts']}", r["workers"], r["status"]),
                *(f"{r['seconds']:.1f}", f"{r['done'] / r['seconds']:,.0f}"),
                _whole_run(r),
                f"{1000 * r['cpu'] / max(1, r['done']):.2f}",
                "{:.1f} to {:.1f}".format(*r["load"]),
                *("yes" if r["same"] else "NO", recall(r["found"], r["planted"])),
            ]
            for r in rows
            if "workers" in r
        ],
    )


def costs_table(rows: list[dict]) -> str:
    return table(
        ["backend", "drawers", "candidates ms/drawer: batched", "one at a time", "ratio"],
        [
            [
                *(r["backend"], f"{r['size']:,}", f"{r['batched_ms']:.3f}"),
                *(f"{r['single_ms']:.3f}", f"{r['single_ms'] / r['batched_ms']:.2f}x"),
            ]
            for r in rows
            if "fill_seconds" in r
        ],
    )


def _whole_run(row: dict) -> str:
    if row["parts"] == row["all_parts"]:
        return f"{row['seconds']:.0f}"
    return f"~{row['seconds'] * row['total'] / max(1, row['done']):.0f} (extrapolated)"


def recall(found: int, expected: int) -> str:
    return f"{found}/{expected} ({100 * found / max(1, expected):.1f}%)"


def main() -> None:
    args = arguments(__doc__, sizes="10000,100000", workers=0, rooms=1, parts=0)
    if args.child:
        if args.workers:
            with_workers(args.child, args.sizes, args.workers, args.rooms, args.parts)
        else:
            child(args.child, args.sizes, args.sizes[0])
        return
    if args.workers:
        rows = list(run_children(__file__, args.backends))
        print(workers_table(rows))
        print(costs_table(rows))
        return
    rows = []
    for r in run_children(__file__, args.backends):
        measured = "" if r.get("all_pairs_measured") else " (extrapolated)"
        rows.append(
            [
                r["backend"],
                f"{r['size']:,}",
                f"{r['sweep_seconds']:.1f}",
                f"{r['compared']:,}",
                f"{r['all_pairs']:,}",
                f"{r['all_pairs'] / max(1, r['compared']):,.0f}x",
                f"{r['all_pairs_seconds']:.0f}{measured}",
                recall(r["found"], r["planted_by_all_pairs"]),
            ]
        )
    print(
        table(
            [
                "backend",
                "drawers",
                "sweep s",
                "pairs compared",
                "all pairs",
                "fewer",
                "all-pairs s",
                "recall vs all-pairs",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
