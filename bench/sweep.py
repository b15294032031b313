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
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import (
    ROOT,
    Vocabulary,
    arguments,
    drawer_row,
    fresh_database_url,
    one_typo,
    run_children,
    setup_django,
    table,
)

PLANTED_SHARE = 0.01  # one drawer in a hundred is a one-typo variant of an earlier one


def build_room(size: int, rng: random.Random):
    """Drawers written while deduplication was off, with planted variants; returns the room, the
    planted pairs (newer, older) and the normalised texts in id order."""
    from dedup import services
    from palace.models import Drawer

    vocabulary = Vocabulary(rng)
    room = services.room_get_or_create(wing="bench", room=f"room-{size}")
    texts: list[str] = []
    planted_at: dict[int, int] = {}
    for index in range(size):
        if index > 100 and rng.random() < PLANTED_SHARE:
            original = rng.randrange(index)
            texts.append(one_typo(texts[original], rng))
            planted_at[index] = original
        else:
            texts.append(vocabulary.sentence())
    rows = [drawer_row(room, text) for text in texts]
    created = Drawer.objects.bulk_create(rows, batch_size=2000)
    ids = [d.pk for d in created]
    planted = {(ids[newer], ids[older]) for newer, older in planted_at.items()}
    return room, planted, ids, [r.normalized_content for r in rows]


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


def with_workers(backend: str, sizes: list[int], most: int) -> None:
    setup_django(fresh_database_url(backend))
    from dedup.maintenance import optimize_candidate_indexes
    from review.models import Proposal
    from review.services import sweep_parts
    from review.services import sweeps as sweep_services
    from review.tasks import run_sweep_part

    rng = random.Random(11)
    for size in sizes:
        room, planted, _, _ = build_room(size, rng)
        optimize_candidate_indexes()
        sweep_parts.PART_SIZE = max(1, size // 10)
        first: set | None = None
        for workers in range(1, most + 1):
            Proposal.objects.all().delete()  # else the second run proposes nothing new
            run = sweep_services.start(wing=room.wing.name, room=room.name, threshold=0.9)
            for part in sweep_parts.plan(run):
                run_sweep_part.enqueue(part.pk)
            command = [sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay"]
            started = time.perf_counter()
            processes = [
                subprocess.Popen([*command, "--no-reload"], cwd=ROOT, env=dict(os.environ))
                for _ in range(workers)
            ]
            for process in processes:
                process.wait()
            seconds = time.perf_counter() - started
            run.refresh_from_db()
            proposed = set(run.proposals.values_list("newer_drawer", "older_drawer"))
            first = proposed if first is None else first
            row = {"backend": backend, "size": size, "workers": workers, "seconds": seconds}
            row |= {"status": run.status, "done": run.done, "parts": run.parts.count()}
            row |= {"same": proposed == first, "found": len(planted & proposed)}
            print(json.dumps(row | {"planted": len(planted)}), flush=True)


def workers_table(rows: list[dict]) -> str:
    return table(
        ["backend", "drawers", "parts", "workers", "status", "sweep s", "drawers/s", "same as 1"],
        [
            [
                r["backend"],
                f"{r['size']:,}",
                r["parts"],
                r["workers"],
                r["status"],
                f"{r['seconds']:.1f}",
                f"{r['done'] / r['seconds']:,.0f}",
                "yes" if r["same"] else "NO",
            ]
            for r in rows
        ],
    )


def recall(found: int, expected: int) -> str:
    return f"{found}/{expected} ({100 * found / max(1, expected):.1f}%)"


def main() -> None:
    args = arguments(__doc__, sizes="10000,100000", workers=0)
    if args.child:
        if args.workers:
            with_workers(args.child, args.sizes, args.workers)
        else:
            child(args.child, args.sizes, args.sizes[0])
        return
    if args.workers:
        print(workers_table(list(run_children(__file__, args.backends))))
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
