#!/usr/bin/env python
"""Write path benchmark: the dedup write (candidate queries, comparisons, links) against a plain
ORM insert of the same kind of rows into the same tables and indexes, at growing room sizes, on
SQLite and PostgreSQL; and the recall of planted one-typo variants (linked to their original by
the write), and, untimed, of three-typo variants still near their original (found among its
candidates).

Both kinds of write are interleaved in one run, so machine noise hits both alike; read the ratio.
`--rooms N` spreads each size over N rooms and writes into the first: the cost of the other rooms'
postings, which a candidate lookup must not read. Drawers are bulk loaded (bench/_fill.py: COPY on
PostgreSQL, executemany on SQLite, the rows and full-text entries the write path would store), so
the issue's sizes fit: 1M in one room or over 1,000 rooms, 10M over 10,000 rooms. Each row says how
long its fill took and how many statements a write of each kind ran; `--profile 1` prints the
dedup writes' cProfile to stderr (with BENCH_DEBUG=1, which shows each child process's stderr).

    .venv/bin/python bench/write_path.py [--sizes 1000,10000,100000] [--writes 1000] [--rooms 1]
        [--profile 0] [--seed 0] [--backends sqlite,postgresql]

`--layouts` runs several layouts in one run, each in a fresh database of its own, in place of
--backends, --rooms and --sizes: space-separated `backend:rooms:sizes` items, the sizes joined by
`+`. Issue 14's table:

    .venv/bin/python bench/write_path.py --writes 1000 --layouts "sqlite:1000:1000000
        sqlite:1:1000000 postgresql:1000:1000000 postgresql:1:1000000 postgresql:10000:10000000"

With BENCH_DATABASE_URL set (one backend), it runs in that database, filled by an earlier run;
give each such run its own --seed, or its writes repeat the earlier run's (exact copies).
"""

from __future__ import annotations

import cProfile
import json
import os
import pstats
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
    request_end,
    run_children,
    sampled,
    setup_django,
    summary,
    table,
)
from bench._fill import bulk_fill
from bench.recall_misses import groups_of


class StatementCount:
    """Counts the statements run on the connection while it is installed (execute_wrapper)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        return execute(sql, params, many, context)


def multi_typo_recall(room, originals, rng, typos: int = 3) -> tuple[int, int]:
    """Untimed: of variants with `typos` typos that are still near their original by the policy,
    how many find it among their candidates. No write: the room is left as it is."""
    from dedup import candidates, policy, services

    config = services.DedupConfig.from_settings()
    found = planted = 0
    for original_id, original in originals:
        variant = original
        for _ in range(typos):
            variant = one_typo(variant, rng)
        text = policy.Text.of(variant)
        old = policy.normalize_text(original)
        if policy.similarity_of_normalized(text.normalized, old) < config.near_threshold:
            continue  # not a near duplicate any more: nothing to find
        planted += 1
        hits = services.candidates_for_text(
            candidates.Scope(room=room), text, threshold=config.near_threshold
        )
        found += any(c.id == original_id for c in [*hits.same, *hits.lexical])
    return found, planted


def report_miss(room, original: str | None, text: str, result: object) -> None:
    """With BENCH_DEBUG set, name each planted variant the write path did not link, with the
    word groups its write asked (the room's sample is the one the write used, still cached)
    and each one's estimated matches."""
    if os.environ.get("BENCH_DEBUG"):
        from unittest import mock

        from dedup import candidates, policy
        from dedup.candidates import room_words

        normalized = policy.Text.of(text).normalized
        sample = room_words.peek(room.id) or room_words.Sample()
        with mock.patch.object(room_words, "sample", lambda room_id: sample):  # no lookup counted
            asked = groups_of(room.id, normalized, candidates.LEXICAL_GROUPS)
        estimates = ", ".join(f"{group} ~{sample.matches(group):.0f}" for group in asked)
        print(f"missed: {original!r} -> {text!r}", result, f"groups: {estimates}", file=sys.stderr)


def interleaved(room, originals, vocabulary, rng, writes: int, profile: bool) -> dict:
    """`writes` dedup writes (every other one a planted one-typo variant of an original) and as
    many plain inserts, interleaved; their latencies, statement counts and the typo recall."""
    from django.db import connection, transaction

    from dedup import services

    dedup_times, plain_times, found = [], [], 0
    dedup_statements, plain_statements = StatementCount(), StatementCount()
    profiler = cProfile.Profile() if profile else None
    for index in range(writes):
        planted = index % 2 == 0 and index // 2 < len(originals)
        original_id, original = originals[index // 2] if planted else (None, None)
        text = one_typo(original, rng) if original is not None else vocabulary.sentence()
        with connection.execute_wrapper(dedup_statements):
            if profiler is not None:
                profiler.enable()
            started = time.perf_counter()
            result = services.drawer_write(room=room, content=text)
            dedup_times.append(time.perf_counter() - started)
            if profiler is not None:
                profiler.disable()
        request_end()
        if planted:
            hit = any(link.older_id == original_id for link in result.links)
            found += hit
            if not hit:
                report_miss(room, original, text, result)

        plain_text = vocabulary.sentence()
        with connection.execute_wrapper(plain_statements):
            started = time.perf_counter()
            with transaction.atomic():
                drawer_row(room, plain_text).save()
            plain_times.append(time.perf_counter() - started)
        request_end()
    if profiler is not None:
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(30)
    return {
        "dedup": summary(dedup_times),
        "plain": summary(plain_times),
        "found": found,
        "dedup_statements": dedup_statements.count / writes,
        "plain_statements": plain_statements.count / writes,
    }


def child(
    backend: str, sizes: list[int], writes: int, room_count: int, profile: bool, seed: int
) -> None:
    # BENCH_DATABASE_URL: a database a run filled before (its drawers are kept, the fill skipped
    # up to the size they reach; fill s is then 0).
    setup_django(os.environ.get("BENCH_DATABASE_URL") or fresh_database_url(backend))
    from dedup import services
    from palace.models import Drawer

    rng = random.Random(7)
    vocabulary = Vocabulary(rng)
    rooms = [services.room_get_or_create(wing="bench", room=f"room-{n}") for n in range(room_count)]
    room = rooms[0]
    present = Drawer.objects.count()
    for size in sizes:
        fill_seconds = bulk_fill(rooms, vocabulary, size - present)
        if seed:  # other writes than an earlier run's into the same database (BENCH_DATABASE_URL)
            rng.seed(seed * 1_000_003 + size)
        originals = sampled(Drawer.objects.filter(room=room), writes // 2, rng)
        measured = interleaved(room, originals, vocabulary, rng, writes, profile)
        present = Drawer.objects.count()
        multi_found, multi_planted = multi_typo_recall(room, originals, rng)
        print(
            json.dumps(
                {
                    "backend": backend,
                    "size": size,
                    "rooms": room_count,
                    "fill_seconds": fill_seconds,
                    **measured,
                    "planted": len(originals),
                    "multi_planted": multi_planted,
                    "multi_found": multi_found,
                }
            ),
            flush=True,
        )


def layout(item: str, args) -> tuple[str, int, list[int]]:
    """A child's backend, room count and sizes: from its `backend:rooms:sizes` item of
    --layouts, or its backend with --rooms and --sizes."""
    if ":" not in item:
        return item, args.rooms, args.sizes
    backend, rooms, sizes = item.split(":")
    return backend, int(rooms), [int(size) for size in sizes.split("+")]


def main() -> None:
    args = arguments(
        __doc__,
        sizes="1000,10000,100000",
        writes=1000,
        rooms=1,
        profile=0,
        seed=0,
        texts={"layouts": "space-separated backend:rooms:sizes items, the sizes joined by +"},
    )
    if args.child:
        backend, rooms, sizes = layout(args.child, args)
        child(backend, sizes, args.writes, rooms, bool(args.profile), args.seed)
        return

    rows = []
    for r in run_children(__file__, args.layouts or args.backends, " " if args.layouts else ","):
        d, p = r["dedup"], r["plain"]
        rows.append(
            [
                r["backend"],
                f"{r['size']:,} / {r['rooms']:,}",
                f"{d['per_second']:,.0f}",
                f"{p['per_second']:,.0f}",
                f"{p['per_second'] / d['per_second']:.2f}x",
                f"{d['p50_ms']:.2f} / {d['p99_ms']:.2f}",
                f"{p['p50_ms']:.2f} / {p['p99_ms']:.2f}",
                f"{r['found']}/{r['planted']} ({100 * r['found'] / r['planted']:.1f}%)",
                f"{r['multi_found']}/{r['multi_planted']} "
                f"({100 * r['multi_found'] / max(1, r['multi_planted']):.1f}%)",
                f"{r['dedup_statements']:.1f} / {r['plain_statements']:.1f}",
                f"{r['fill_seconds']:,.0f}",
            ]
        )
    print(
        table(
            [
                "backend",
                "drawers / rooms",
                "dedup writes/s",
                "plain inserts/s",
                "cost ratio",
                "dedup p50 / p99 ms",
                "plain p50 / p99 ms",
                "typo recall",
                "3-typo recall",
                "statements dedup / plain",
                "fill s",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
