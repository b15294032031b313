#!/usr/bin/env python
"""Lexical candidate query: what the number of word pairs costs and what it finds.

The full-text candidate query asks for drawers holding both words of at least one pair, the pairs
made of the text's non-stop words (rarer in the room first): five on the write path
(`LEXICAL_GROUPS`), six in sweeps (`SWEEP_LEXICAL_GROUPS`). More pairs survive more broken
words, and each pair costs index lookups. This measures both, for 3 to 6 pairs, in a room grown
to each size and then written to through the write path (so the SQLite full-text index has the
segments a live palace has): the time of one candidate query (`services.candidates_for_text`,
wall and CPU), and the share of variants with 1, 2 and 3 typos, still near their original by
the policy, that find it among their candidates. Configurations are interleaved per text, so
machine noise hits them alike.
Nothing is written while measuring.

    .venv/bin/python bench/lexical_groups.py [--sizes 100000] [--backends sqlite,postgresql]
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import (
    Vocabulary,
    arguments,
    fill,
    fresh_database_url,
    one_typo,
    run_children,
    sampled,
    settle,
    setup_django,
    table,
)

# (word pairs, of them pairs of words seen in the room's sample: room_words.SEEN_GROUPS); the
# last is the design before the seen words' pairs, for comparison.
PAIRS = ((3, 2), (4, 2), (5, 2), (6, 2), (5, 0))
TYPOS = (1, 2, 3)
WARM_UP_WRITES = 2000  # as many as bench/write_path.py makes after settling


def variants_of(originals, rng: random.Random, typos: int, threshold: float):
    """(original id, Text) for variants with `typos` typos still near their original."""
    from dedup import policy

    found = []
    for original_id, original in originals:
        variant = original
        for _ in range(typos):
            variant = one_typo(variant, rng)
        text = policy.Text.of(variant)
        near = policy.similarity_of_normalized(text.normalized, policy.normalize_text(original))
        if near >= threshold:
            found.append((original_id, text))
    return found


def report(
    backend: str,
    present: int,
    used_by: dict[tuple[int, int], str],
    wall: dict[tuple[int, int], list[float]],
    cpu: dict[tuple[int, int], list[float]],
    found: dict[tuple[tuple[int, int], int], int],
    planted: dict[int, list],
) -> None:
    """One JSON line per number of word pairs: its mean cost and its recall by typos."""
    for pairs in PAIRS:
        print(
            json.dumps(
                {
                    "backend": backend,
                    "size": present,
                    "pairs": pairs[0],
                    "seen": pairs[1],
                    "used_by": used_by.get(pairs, ""),
                    "wall_ms": statistics.mean(wall[pairs]) * 1000,
                    "cpu_ms": statistics.mean(cpu[pairs]) * 1000,
                    "recall": {
                        typos: [found[(pairs, typos)], len(planted[typos])] for typos in TYPOS
                    },
                }
            ),
            flush=True,
        )


def child(backend: str, sizes: list[int], originals_count: int) -> None:
    setup_django(fresh_database_url(backend))
    from dedup import candidates, policy, services
    from dedup.candidates import room_words
    from palace.models import Drawer

    seen = room_words.SEEN_GROUPS
    used_by = {
        (candidates.LEXICAL_GROUPS, seen): "(write path)",
        (candidates.SWEEP_LEXICAL_GROUPS, seen): "(sweeps)",
        (candidates.LEXICAL_GROUPS, 0): "(before)",
    }
    rng = random.Random(13)
    vocabulary = Vocabulary(rng)
    room = services.room_get_or_create(wing="bench", room="room")
    scope = candidates.Scope(room=room)
    threshold = services.DedupConfig.from_settings().near_threshold
    present = 0
    for size in sizes:
        fill(room, vocabulary, max(0, size - present - WARM_UP_WRITES))
        settle()
        for _ in range(WARM_UP_WRITES):
            services.drawer_write(room=room, content=vocabulary.sentence())
        present = Drawer.objects.filter(room=room).count()
        originals = sampled(Drawer.objects.filter(room=room), originals_count, rng)
        planted = {typos: variants_of(originals, rng, typos, threshold) for typos in TYPOS}
        # (original id, typos, text): every text is queried under each configuration in turn, in
        # a rotating order; new texts (nothing to find) count for the time as the variants do.
        queries = [(None, 0, policy.Text.of(vocabulary.sentence())) for _ in originals]
        for typos in TYPOS:
            queries += [(original_id, typos, text) for original_id, text in planted[typos]]
        wall: dict[tuple[int, int], list[float]] = {pairs: [] for pairs in PAIRS}
        cpu: dict[tuple[int, int], list[float]] = {pairs: [] for pairs in PAIRS}
        found = {(pairs, typos): 0 for pairs in PAIRS for typos in TYPOS}
        for index, (original_id, typos, text) in enumerate(queries):
            order = PAIRS[index % len(PAIRS) :] + PAIRS[: index % len(PAIRS)]
            for pairs in order:
                room_words.SEEN_GROUPS = pairs[1]
                started, started_cpu = time.perf_counter(), time.thread_time()
                hits = services.candidates_for_text(
                    scope, text, threshold=threshold, groups=pairs[0]
                )
                wall[pairs].append(time.perf_counter() - started)
                cpu[pairs].append(time.thread_time() - started_cpu)
                if original_id is not None:
                    found[(pairs, typos)] += any(
                        c.id == original_id for c in [*hits.same, *hits.lexical]
                    )
        report(backend, present, used_by, wall, cpu, found, planted)


def main() -> None:
    args = arguments(__doc__, sizes="100000", originals=500)
    if args.child:
        child(args.child, args.sizes, args.originals)
        return

    rows = []
    for r in run_children(__file__, args.backends):
        recall = [
            f"{found}/{planted} ({100 * found / max(1, planted):.1f}%)"
            for found, planted in (r["recall"][str(typos)] for typos in TYPOS)
        ]
        rows.append(
            [
                r["backend"],
                f"{r['size']:,}",
                f"{r['pairs']} ({r['seen']} seen) {r['used_by']}".strip(),
                f"{r['wall_ms']:.2f}",
                f"{r['cpu_ms']:.2f}",
                *recall,
            ]
        )
    print(
        table(
            [
                "backend",
                "room size",
                "word pairs",
                "query ms",
                "query CPU ms",
                *(f"{typos}-typo recall" for typos in TYPOS),
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
