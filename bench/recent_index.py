#!/usr/bin/env python
"""A design weighed for issue 14's 1.5x write: a small second FTS5 index ("recent") that takes
new drawers' terms, moved into the big index in batches, so that the big index keeps few
segments. A write's word-pair lookup reads each of its terms in every segment, and each commit
adds one, so after a run of writes today's index holds ~14 (automerge=4) where the bulk-loaded,
optimised index held one; the recent design keeps those small segments in a small index, and
adds one segment to the big index a batch.

Raw SQLite, no Django, with `bench/minhash_bands.py`'s store (a drawer table and its contentless
FTS5 index, each word of a text a term of its room) and its word-pair lookup, each design in a
store of its own (a WAL file database, synchronous=NORMAL), all filled alike with `--size`
drawers over `--rooms` rooms and optimised to one segment, as `dedup_maintain` leaves them:

- today: a plain insert is the drawer and its terms in the big index; a dedup write asks the
  big index the five word pairs (its ten longest words), then inserts as the plain insert does.
- recent:B: the terms go to the recent index; a dedup write asks big and recent the five pairs,
  in one statement (each pair's lookup in both, ranked together; `:two` for one statement an
  index, ranked in Python); then inserts. The B-th write (plain or dedup alike, whichever
  reaches it) then, in a transaction of its own, re-inserts the batch's terms into big (kept in
  memory here; the app would select them from the drawer rows, its terms being an expression
  of the row) and empties recent with 'delete-all' (a contentless table's cheapest empty).
  `:optimize=K` also optimises recent every K-th write; `:automerge=N`, `:crisismerge=N` set
  recent's FTS5 options. With FTS5's defaults recent holds as many segments as today's index
  (a segment a commit), and a lookup pays for them there instead; `crisismerge=2` (merge a
  level when it holds two) keeps it at a few, for little (its merges are of small segments).

Then `--writes` rounds, each a plain insert and a dedup write in every design, the same texts
for all, the order (designs and kinds) reversed every other round. Every other round's dedup
write is of a one-typo variant of a drawer: every other one of those of a filled drawer, the
rest of one written by a plain insert during the run (among the latest 512, so that some are in
recent and some moved), which the lookup must find wherever it is ("in recent": how many of the
run's were there when asked). Each write is one transaction (a move's in the same timing); times
in ms; "lookup" is the candidate statement(s) alone, within the dedup write; "both" is the
sum of the two means; segments are counted every 25 rounds.

    .venv/bin/python bench/recent_index.py [--size 100000] [--rooms 100] [--writes 3000]
        [--designs "today;recent:256:crisismerge=2;recent:1024:crisismerge=2"] [--seed 0]
"""

from __future__ import annotations

import collections
import functools
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import Vocabulary, one_typo, percentile, store_arguments, table
from bench.minhash_bands import RANKED, Store

DESIGNS = "today;recent:256:crisismerge=2;recent:1024:crisismerge=2"
RECENT_OPTIONS = ("automerge", "crisismerge")
LATEST = 512  # the run's drawers a planted variant is taken from: the latest plain inserts


def timed(ranked):
    """A store's lookup (`ranked`, the statement(s) of a dedup write's candidates), timed."""

    @functools.wraps(ranked)
    def wrapper(self, lookups: str, params: list) -> list[int]:
        started = time.perf_counter()
        try:
            return ranked(self, lookups, params)
        finally:
            self.lookups.append(time.perf_counter() - started)

    return wrapper


class Design(Store):
    """A design's store: its label, its batch moves' and lookups' times (s)."""

    def __init__(self, path: Path, stop: frozenset[str], label: str) -> None:
        super().__init__(path, stop, bands=0)
        self.label = label
        self.moves: list[float] = []
        self.lookups: list[float] = []

    def settle(self) -> None:
        raise NotImplementedError

    def segments(self) -> tuple[int, int | None]:
        raise NotImplementedError

    def in_recent(self, drawer: int) -> bool:
        raise NotImplementedError


class Today(Design):
    """Today's design: `Store` as it is (its plain insert, its word-pair write)."""

    ranked = timed(Store.ranked)

    def settle(self) -> None:
        self.db.execute("INSERT INTO fts(fts) VALUES ('optimize')")

    def segments(self) -> tuple[int, int | None]:
        return count_segments(self.db, "fts"), None

    def in_recent(self, drawer: int) -> bool:
        return False


class Recent(Design):
    """The recent design. `Store`'s insert and lookup ask the index named `fts`: here the recent
    one; the big one, filled as `fts`, is renamed `big` by `settle`."""

    def __init__(self, path: Path, stop: frozenset[str], label: str, spec: dict[str, Any]) -> None:
        super().__init__(path, stop, label)
        self.batch, self.two = spec["batch"], spec["two"]
        self.optimize_every, self.options = spec["optimize"], spec["options"]
        self.pending: list[str] = []  # the terms in recent, in drawer order
        self.moved = self.written = 0  # the last drawer moved (or filled); writes since settle

    def settle(self) -> None:
        self.db.execute("INSERT INTO fts(fts) VALUES ('optimize')")
        self.db.execute("ALTER TABLE fts RENAME TO big")
        self.db.execute(
            "CREATE VIRTUAL TABLE fts USING fts5(t, content='', tokenize='ascii', detail=none)"
        )
        for name, value in self.options.items():
            self.db.execute("INSERT INTO fts(fts, rank) VALUES (?, ?)", (name, value))
        self.pending.clear()
        self.moved = self.db.execute("SELECT max(id) FROM drawer").fetchone()[0]

    def terms(self, text: str, room: int) -> str:
        terms = super().terms(text, room)
        self.pending.append(terms)
        return terms

    @timed
    def ranked(self, lookups: str, params: list) -> list[int]:
        """The pairs' candidates in recent (`lookups`, as `Store.pairs` asks) and in big."""
        if not params:
            return []
        in_big = lookups.replace("FROM fts WHERE fts MATCH", "FROM big WHERE big MATCH")
        if not self.two:
            return super().ranked(f"{lookups} UNION ALL {in_big}", params + params)
        hits: collections.Counter[int] = collections.Counter()
        for sql in (lookups, in_big):
            hits.update(row[0] for row in self.db.execute(sql, params))
        return sorted(hits, key=lambda drawer: (hits[drawer], drawer), reverse=True)[:RANKED]

    def plain(self, room: int, text: str) -> list[int]:
        found = super().plain(room, text)
        self.after_write()
        return found

    def pairs(self, room: int, text: str) -> list[int]:
        found = super().pairs(room, text)
        self.after_write()
        return found

    def after_write(self) -> None:
        self.written += 1
        if self.written % self.batch == 0:
            self.move()
        elif self.optimize_every and self.written % self.optimize_every == 0:
            self.db.execute("INSERT INTO fts(fts) VALUES ('optimize')")

    def move(self) -> None:
        """Recent's terms into big, and recent emptied, in one transaction."""
        started = time.perf_counter()
        self.db.execute("BEGIN IMMEDIATE")
        rows = self.db.execute("SELECT id FROM drawer WHERE id > ? ORDER BY id", (self.moved,))
        ids = [row[0] for row in rows]
        self.db.executemany(
            "INSERT INTO big(rowid, t) VALUES (?, ?)", zip(ids, self.pending, strict=True)
        )
        self.db.execute("INSERT INTO fts(fts) VALUES ('delete-all')")
        self.db.execute("COMMIT")
        self.moved = ids[-1]
        self.pending.clear()
        self.moves.append(time.perf_counter() - started)

    def segments(self) -> tuple[int, int | None]:
        return count_segments(self.db, "big"), count_segments(self.db, "fts")

    def in_recent(self, drawer: int) -> bool:
        return drawer > self.moved


def count_segments(db, index: str) -> int:
    return db.execute(f"SELECT count(DISTINCT segid) FROM {index}_idx").fetchone()[0]


def parsed_design(design: str) -> dict:
    """`today`, or `recent:B[:two][:optimize=K][:automerge=N][:crisismerge=N]`."""
    name, *parts = design.split(":")
    if name == "today" and not parts:
        return {"recent": False}
    if name != "recent" or not parts or not parts[0].isdigit() or int(parts[0]) < 1:
        sys.exit(f"unknown design {design!r}: today or recent:B[:two][:optimize=K][...]")
    spec: dict[str, Any] = {
        "recent": True,
        "batch": int(parts[0]),
        "two": False,
        "optimize": 0,
        "options": {},
    }
    for part in parts[1:]:
        key, _, value = part.partition("=")
        if key == "two" and not value:
            spec["two"] = True
        elif key == "optimize" and value.isdigit():
            spec["optimize"] = int(value)
        elif key in RECENT_OPTIONS and value.isdigit():
            spec["options"][key] = int(value)
        else:
            sys.exit(f"unknown part {part!r} of design {design!r}")
    return spec


def filled(designs: list[str], directory: Path, vocabulary: Vocabulary, args) -> list[Design]:
    """A store a design, each filled with the same drawers (in one transaction) and settled."""
    stop = frozenset(vocabulary.common)
    stores: list[Design] = []
    for index, design in enumerate(designs):
        spec = parsed_design(design)
        path = directory / f"design{index}.db"
        store: Design = (
            Recent(path, stop, design, spec) if spec["recent"] else Today(path, stop, design)
        )
        vocabulary.rng = random.Random(args.seed + 1)  # the same drawers in every store
        started = time.perf_counter()
        store.db.execute("BEGIN")
        for number in range(args.size):
            Store.insert(store, number % args.rooms, vocabulary.sentence(), bands=False)
        store.db.execute("COMMIT")
        store.settle()
        print(f"{design}: filled in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        stores.append(store)
    return stores


class Tally:
    """A design's times, segment counts and planted variants found."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {"plain": [], "dedup": []}
        self.segments: list[tuple[int, int | None]] = []
        self.found = {"filled": 0, "run": 0, "in recent": 0}
        self.written: list[tuple[int, int, str]] = []  # (id, room, text) of the run's plain ones


def rounds(stores: list[Design], vocabulary: Vocabulary, rng: random.Random, args) -> list[Tally]:
    """Each design's tally, over `--writes` rounds of a plain insert and a dedup write each."""
    originals = (
        stores[0]
        .db.execute(
            "SELECT id, room, content FROM drawer ORDER BY random() LIMIT ?", (args.writes,)
        )
        .fetchall()
    )
    tallies = [Tally() for _ in stores]
    for round_ in range(args.writes):
        plain = (rng.randrange(args.rooms), vocabulary.sentence())
        dedup, original, of_run = (rng.randrange(args.rooms), vocabulary.sentence()), None, False
        if round_ % 2 == 0:
            of_run = round_ % 4 == 2 and len(tallies[0].written) > 0
            pool = tallies[0].written[-LATEST:] if of_run else originals
            original = pool[rng.randrange(len(pool))] if of_run else originals[round_ // 4]
            dedup = (original[1], one_typo(original[2], rng))
        steps = [(index, kind) for index in range(len(stores)) for kind in ("plain", "dedup")]
        for index, kind in steps if round_ % 2 else reversed(steps):
            store, tally = stores[index], tallies[index]
            write = store.plain if kind == "plain" else store.pairs
            room, text = plain if kind == "plain" else dedup
            was_recent = original is not None and store.in_recent(original[0])
            begun = time.perf_counter()
            candidates = write(room, text)
            tally.times[kind].append(time.perf_counter() - begun)
            if kind == "plain":
                newest = store.db.execute("SELECT max(id) FROM drawer").fetchone()[0]
                tally.written.append((newest, room, text))
            elif original is not None:
                found = original[0] in candidates
                tally.found["run" if of_run else "filled"] += found
                tally.found["in recent"] += found and of_run and was_recent
        if round_ % 25 == 0:
            for store, tally in zip(stores, tallies, strict=True):
                tally.segments.append(store.segments())
    ids = [[drawer for drawer, _, _ in tally.written] for tally in tallies]
    assert all(written == ids[0] for written in ids), "the stores' drawer ids parted"
    return tallies


def timing_row(store: Design, tally: Tally) -> list[str]:
    plain, dedup = tally.times["plain"], tally.times["dedup"]
    row = [store.label]
    for spent in (plain, dedup):
        row += [
            f"{1000 * value:.3f}" for value in (statistics.mean(spent), statistics.median(spent))
        ]
        row.append(f"{1000 * percentile(spent, 0.99):.3f}")
    ratio = statistics.mean(dedup) / statistics.mean(plain)
    both = 1000 * (statistics.mean(dedup) + statistics.mean(plain))
    lookup = 1000 * statistics.mean(store.lookups)
    return [*row, f"{lookup:.3f}", f"{ratio:.2f}x", f"{both:.3f}"]


def structure_row(store: Design, tally: Tally, args) -> list[str]:
    def counted(values: list[int | None]) -> str:
        known = [value for value in values if value is not None]
        return f"{statistics.mean(known):.1f} / {max(known)}" if known else "-"

    moves = [1000 * spent for spent in store.moves]
    planted = (args.writes + 1) // 2
    of_run = (args.writes + 1) // 4
    return [
        store.label,
        counted([big for big, _ in tally.segments]),
        counted([recent for _, recent in tally.segments]),
        str(len(moves)),
        f"{statistics.mean(moves):.2f} / {max(moves):.2f}" if moves else "-",
        f"{tally.found['filled']}/{planted - of_run}",
        f"{tally.found['run']}/{of_run} ({tally.found['in recent']})",
    ]


def main() -> None:
    args = store_arguments(__doc__, writes=3000, seed=0, texts={"designs": DESIGNS})
    designs = args.designs.split(";")
    for design in designs:
        parsed_design(design)  # refused here rather than after a fill
    vocabulary = Vocabulary(random.Random(args.seed))
    with tempfile.TemporaryDirectory() as directory:
        stores = filled(designs, Path(directory), vocabulary, args)
        rng = random.Random(args.seed + 2)
        vocabulary.rng = rng
        tallies = rounds(stores, vocabulary, rng, args)
    kinds = ["mean ms", "p50 ms", "p99 ms"]
    headers = ["design", *[f"plain {k}" for k in kinds], *[f"dedup {k}" for k in kinds]]
    rows = [timing_row(s, t) for s, t in zip(stores, tallies, strict=True)]
    print(table([*headers, "lookup mean ms", "dedup / plain", "both ms"], rows))
    print()
    headers = ["design", "big segments mean / max", "recent segments mean / max", "moves"]
    headers += ["move mean / max ms", "typo recall (filled)", "typo recall (run; in recent)"]
    rows = [structure_row(s, t, args) for s, t in zip(stores, tallies, strict=True)]
    print(table(headers, rows))


if __name__ == "__main__":
    main()
