#!/usr/bin/env python
"""Sweep benchmark: time and pairs compared by a consolidation sweep over one room of 10,000 and
100,000 drawers with planted duplicates, against an all-pairs comparison of the same room
(rapidfuzz cdist, OSA, measured on the 10,000 room and extrapolated beyond), and the recall of the
planted near duplicates compared with all-pairs.

    .venv/bin/python bench/sweep.py [--sizes 10000,100000] [--backends sqlite]
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import (
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


def recall(found: int, expected: int) -> str:
    return f"{found}/{expected} ({100 * found / max(1, expected):.1f}%)"


def main() -> None:
    args = arguments(__doc__, sizes="10000,100000")
    if args.child:
        child(args.child, args.sizes, args.sizes[0])
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
