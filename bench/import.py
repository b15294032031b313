#!/usr/bin/env python
"""Import benchmark: records per second of `import_memories` (MemPalace JSONL, every record
through the write path) of a file holding 10% duplicates (half exact copies, half one-typo
variants of earlier records), next to the plain insert rate of the same rows (one ORM insert per
row, in its own transaction, into rooms of their own), on SQLite and PostgreSQL. The two are
interleaved: each time the import reports a chunk written, the same rows are inserted plainly
(their time is taken out of the import's), so machine noise hits both alike.

    .venv/bin/python bench/import.py [--sizes 100000] [--rooms 20] [--backends sqlite,postgresql]

BENCH_IMPORT_LOG=FILE appends the rates so far every 10,000 records (for long runs).
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import tempfile
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


def source_lines(size: int, rooms: int, rng: random.Random) -> list[dict]:
    vocabulary = Vocabulary(rng)
    lines: list[dict] = []
    for index in range(size):
        room = f"room-{index % rooms}"
        earlier = [  # earlier records of the room, with a word long enough for a typo
            line
            for line in lines[-rooms * 5 :]
            if line["metadata"]["room"] == room and re.search(r"\w{5}", line["document"])
        ]
        text = vocabulary.sentence()
        if index % 10 == 9 and earlier:  # 10% duplicates: exact copies and one-typo variants
            original = rng.choice(earlier)["document"]
            text = original if index % 20 == 9 else one_typo(original, rng)
        lines.append(
            {
                "id": f"bench-{index}",
                "document": text,
                "metadata": {"wing": "bench", "room": room, "added_by": "bench"},
            }
        )
    return lines


def child(backend: str, sizes: list[int], rooms: int) -> None:
    setup_django(fresh_database_url(backend))
    from dedup import imports, services

    for size in sizes:
        lines = source_lines(size, rooms, random.Random(size))
        plain_rooms = [
            services.room_get_or_create(wing=f"plain-{size}", room=f"room-{i}")
            for i in range(rooms)
        ]
        plain = PlainInserts(plain_rooms, [line["document"] for line in lines])
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "export.jsonl"
            path.write_text("".join(json.dumps(line) + "\n" for line in lines))
            imported = imports.import_create(source=str(path), format="mempalace")
            plain.started = started = time.perf_counter()
            tally = imports.import_run(imported, path=path, on_progress=plain)
            elapsed = time.perf_counter() - started - plain.seconds
        print(
            json.dumps(
                {
                    "backend": backend,
                    "size": size,
                    "import": size / elapsed,
                    "plain": size / plain.seconds,
                    "summary": tally.summary(),
                }
            ),
            flush=True,
        )


class PlainInserts:
    """Called each time the import reports a chunk written: the same rows, inserted plainly (one
    ORM insert per row, in its own transaction), timed apart."""

    def __init__(self, rooms: list, texts: list[str]) -> None:
        self.rooms, self.texts = rooms, texts
        self.done = 0
        self.seconds = 0.0
        self.started = time.perf_counter()
        self.log, self.logged = os.environ.get("BENCH_IMPORT_LOG"), 0

    def __call__(self, upto: int) -> None:
        from django.db import transaction

        started = time.perf_counter()
        for index in range(self.done, upto):
            with transaction.atomic():
                drawer_row(self.rooms[index % len(self.rooms)], self.texts[index]).save()
        self.done = upto
        self.seconds += time.perf_counter() - started
        if self.log and upto // 10_000 > self.logged:  # a long run's rates so far
            self.logged = upto // 10_000
            imported = time.perf_counter() - self.started - self.seconds
            rates = {"records": upto, "import": upto / imported, "plain": upto / self.seconds}
            with open(self.log, "a") as log:
                log.write(json.dumps(rates) + "\n")


def main() -> None:
    args = arguments(__doc__, sizes="100000", rooms=20)
    if args.child:
        child(args.child, args.sizes, args.rooms)
        return
    rows = []
    for r in run_children(__file__, args.backends):
        s = r["summary"]
        rows.append(
            [
                r["backend"],
                f"{r['size']:,}",
                f"{r['import']:,.0f}",
                f"{r['plain']:,.0f}",
                f"{r['plain'] / r['import']:.2f}x",
                f"{s['created']:,} / {s['exact']:,} / {s['similar']:,}",
            ]
        )
    print(
        table(
            [
                "backend",
                "records",
                "import records/s",
                "plain inserts/s",
                "cost ratio",
                "created / exact / linked",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
