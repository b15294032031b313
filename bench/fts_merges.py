#!/usr/bin/env python
"""SQLite's full-text index under a run of writes, by FTS5 merge setting: how many segments a
candidate lookup reads, what the candidate statement, a dedup write and a plain insert cost, and
what runs after each response (the write-ahead log's checkpoint, and a 'merge' command where the
setting asks for one).

Every write adds a segment to an FTS5 index (its terms are flushed at commit), and a lookup looks
each of its terms up in every segment; FTS5 merges them as writes go (`automerge`, or all of a
level at once in the write that fills it to `crisismerge`). Merging more leaves fewer segments to
read, but someone pays for the merging: the writes (plain inserts too), or the end of a request.
This measures both sides, each setting in a fresh store (`bench/_fill.py`, `--size` drawers over
`--rooms` rooms, optimised to one segment as `dedup_maintain` leaves it), then `--writes` dedup
writes (every other one a one-typo variant) and as many plain inserts, interleaved, into the
first room, as bench/write_path.py does. Times are means in ms.

    .venv/bin/python bench/fts_merges.py [--size 100000] [--rooms 100] [--writes 3000]
        [--settings "default;crisismerge=4;usermerge=2,merge=4"]

A setting is FTS5 configuration options (`automerge=2`, `crisismerge=4`, `usermerge=2`), with
`merge=N` for a 'merge' command of N pages after every write's response, `merge=N/K` after every
K-th. (A negative N, which merges any segments whatever their level, once left the index
unreadable, "database disk image is malformed", on SQLite 3.40.1: not offered.)
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
    drawer_row,
    fresh_database_url,
    one_typo,
    request_end,
    run_children,
    sampled,
    setup_django,
    store_arguments,
    table,
)
from bench._fill import bulk_fill

SETTINGS = (
    "default;crisismerge=4;crisismerge=3;automerge=2;usermerge=2,merge=4;usermerge=2,merge=64/8"
)
FTS_OPTIONS = ("automerge", "crisismerge", "usermerge")


def parsed_setting(setting: str) -> tuple[dict[str, int], int, int]:
    """The FTS5 options a setting names, and the pages and the period of its 'merge' command
    (0 pages: none)."""
    options: dict[str, int] = {}
    pages, every = 0, 1
    for part in filter(None, setting.split(",")):
        if part == "default":
            continue
        name, _, value = part.partition("=")
        if name == "merge":
            count, _, period = value.partition("/")
            pages, every = int(count), int(period or 1)
            if pages <= 0:
                sys.exit("merge=N takes a positive N (see the docstring)")
        elif name in FTS_OPTIONS:
            options[name] = int(value)
        else:
            sys.exit(f"unknown setting {part!r}: {', '.join(FTS_OPTIONS)} or merge=N[/K]")
    return options, pages, every


class CandidateTimer:
    """Times the candidate statement (`dedup.candidates.for_text`'s) while installed."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            if sql.startswith("SELECT 0, s.*"):
                self.times.append(time.perf_counter() - started)


def child(setting: str, size: int, room_count: int, writes: int) -> dict:
    """One setting's row, in a fresh store."""
    setup_django(fresh_database_url("sqlite"))
    from django.db import connection

    from dedup import services
    from palace.models import Drawer

    options, pages, every = parsed_setting(setting)
    rng = random.Random(7)
    vocabulary = Vocabulary(rng)
    rooms = [services.room_get_or_create(wing="bench", room=f"room-{n}") for n in range(room_count)]
    bulk_fill(rooms, vocabulary, size)
    originals = [text for _, text in sampled(Drawer.objects.filter(room=rooms[0]), 1000, rng)]
    with connection.cursor() as cursor:
        for name, value in options.items():
            cursor.execute(
                "INSERT INTO palace_drawer_fts(palace_drawer_fts, rank) VALUES (%s, %s)",
                [name, value],
            )
    return {
        "setting": setting,
        **interleaved(rooms[0], originals, vocabulary, writes, pages, every),
    }


def interleaved(room, originals: list[str], vocabulary, writes: int, pages: int, every: int):
    """`writes` dedup writes (every other one a one-typo variant) and as many plain inserts,
    interleaved, each followed by a request's end and the setting's 'merge', if any."""
    from django.db import connection, transaction

    from dedup import services

    rng = vocabulary.rng
    timer = CandidateTimer()
    dedup, plain, after, counted = [], [], [], []
    for index in range(writes):
        if index % 2 == 0:
            text = one_typo(originals[(index // 2) % len(originals)], rng)
        else:
            text = vocabulary.sentence()
        with connection.execute_wrapper(timer):
            started = time.perf_counter()
            services.drawer_write(room=room, content=text)
            dedup.append(time.perf_counter() - started)
        after.append(after_response(2 * index + 1, pages, every))
        plain_text = vocabulary.sentence()
        started = time.perf_counter()
        with transaction.atomic():
            drawer_row(room, plain_text).save()
        plain.append(time.perf_counter() - started)
        after.append(after_response(2 * index + 2, pages, every))
        if index % 25 == 0:
            counted.append(segments())
    return {
        "segments": statistics.mean(counted),
        "segments_max": max(counted),
        "candidates": statistics.mean(timer.times) * 1000,
        "dedup": statistics.mean(dedup) * 1000,
        "plain": statistics.mean(plain) * 1000,
        "after": statistics.mean(after) * 1000,
    }


def after_response(written: int, pages: int, every: int) -> float:
    """What follows the `written`-th write's response: the request's end (the log's checkpoint
    when due) and the setting's 'merge' command when due; its time, in seconds."""
    from django.db import connection

    started = time.perf_counter()
    request_end()
    if pages and written % every == 0:
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO palace_drawer_fts(palace_drawer_fts, rank) VALUES ('merge', %s)",
                [pages],
            )
    return time.perf_counter() - started


def segments() -> int:
    """The full-text index's segments now."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(DISTINCT segid) FROM palace_drawer_fts_idx")
        return cursor.fetchone()[0]


def main() -> None:
    args = store_arguments(__doc__, writes=3000, texts={"settings": SETTINGS})
    if args.child:
        print(json.dumps(child(args.child, args.size, args.rooms, args.writes)), flush=True)
        return
    for setting in args.settings.split(";"):
        parsed_setting(setting)  # refused here rather than after a fill
    rows = []
    for r in run_children(__file__, args.settings, separator=";"):
        rows.append(
            [
                r["setting"],
                f"{r['segments']:.1f} / {r['segments_max']}",
                f"{r['candidates']:.3f}",
                f"{r['dedup']:.3f}",
                f"{r['plain']:.3f}",
                f"{r['after']:.3f}",
                f"{r['dedup'] / r['plain']:.2f}x",
                f"{r['dedup'] + r['plain'] + 2 * r['after']:.3f}",
            ]
        )
    print(
        table(
            [
                "setting",
                "segments mean / max",
                "candidates ms",
                "dedup write ms",
                "plain insert ms",
                "after a response ms",
                "dedup / plain",
                "both + after ms",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
