#!/usr/bin/env python
"""A design weighed for issue 14's 1.5x write and not built: a write's lexical candidates from a
table of min-hash band keys (a b-tree, one probe a key) instead of the full-text index's word
groups (a lookup of each term in every FTS5 segment). Raw SQLite, no Django: a drawer table with
its contentless FTS5 index (terms as the write path's: each word of one room), and a band
table, `(room, key, drawer)` WITHOUT ROWID, filled in bulk with `--size` drawers over `--rooms`
rooms (the FTS5 index then optimised to one segment, as `dedup_maintain` leaves it).

Then `--writes` rounds, each of three writes in an order that alternates: a plain insert (the
drawer and its terms), a write asking five word pairs of the index as the write path does (its
ten longest words), and a write asking `--bands` band keys (for each of the bands' seeds, the
text's two words of least hash; one word when it has fewer than four) and inserting them with
the drawer. Every other round's two lookups are of a one-typo variant of a stored drawer. Each
write is one transaction; times in ms; "extra" is a write's mean less the plain insert's.

    .venv/bin/python bench/minhash_bands.py [--size 100000] [--rooms 100] [--writes 2000]
        [--bands 12]
"""

from __future__ import annotations

import hashlib
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import Vocabulary, one_typo, percentile, store_arguments, table

MASK = (1 << 64) - 1
GROUP_MATCHES = 64
RANKED = 60


def words_of(text: str, stop: frozenset[str]) -> list[str]:
    words = re.sub(r"[^a-z ]", "", text.lower()).split()
    return list(dict.fromkeys(w for w in words if w not in stop and len(w) > 1))


def word_hash(word: str) -> int:
    return int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")


def band_keys(words: list[str], bands: int) -> list[int]:
    """For each band, the text's words of least hash under the band's seed, as one signed key."""
    hashes = [word_hash(word) for word in words]
    width = 2 if len(words) >= 4 else 1
    keys = set()
    for band in range(bands if words else 0):
        seed = word_hash(f"band {band}") | 1
        mixed = sorted((((h ^ seed) * 0x9E3779B97F4A7C15) & MASK, h) for h in hashes)
        picked = sorted(h for _, h in mixed[:width])
        digest = hashlib.blake2b(repr((band, picked)).encode(), digest_size=8).digest()
        keys.add(int.from_bytes(digest, "big", signed=True))
    return sorted(keys)


class Store:
    def __init__(self, path: Path, stop: frozenset[str], bands: int) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.stop, self.bands = stop, bands
        self.db.executescript(
            """
            CREATE TABLE drawer(id INTEGER PRIMARY KEY, room INT, content TEXT, hash TEXT);
            CREATE INDEX drawer_hash ON drawer(room, hash);
            CREATE VIRTUAL TABLE fts USING fts5(t, content='', tokenize='ascii', detail=none);
            CREATE TABLE band(room INT, key INT, drawer INT, PRIMARY KEY(room, key, drawer))
                WITHOUT ROWID;
            """
        )

    def terms(self, text: str, room: int) -> str:
        return " ".join(f"{word}x{room}" for word in words_of(text, self.stop))

    def insert(self, room: int, text: str, *, bands: bool) -> None:
        digest = hashlib.sha1(text.encode()).hexdigest()
        cursor = self.db.execute(
            "INSERT INTO drawer(room, content, hash) VALUES (?, ?, ?)", (room, text, digest)
        )
        drawer = cursor.lastrowid
        self.db.execute("INSERT INTO fts(rowid, t) VALUES (?, ?)", (drawer, self.terms(text, room)))
        if bands:
            keys = band_keys(words_of(text, self.stop), self.bands)
            self.db.executemany(
                "INSERT INTO band VALUES (?, ?, ?)", [(room, key, drawer) for key in keys]
            )

    def plain(self, room: int, text: str) -> list[int]:
        self.db.execute("BEGIN IMMEDIATE")
        self.insert(room, text, bands=False)
        self.db.execute("COMMIT")
        return []

    def pairs(self, room: int, text: str) -> list[int]:
        self.db.execute("BEGIN IMMEDIATE")
        words = sorted(words_of(text, self.stop), key=len, reverse=True)[:10]
        count = -(-len(words) // 2)
        groups = [" AND ".join(f"{w}x{room}" for w in words[i::count]) for i in range(count)]
        lookup = (
            "SELECT * FROM (SELECT rowid AS id FROM fts WHERE fts MATCH ? "
            f"ORDER BY rowid DESC LIMIT {GROUP_MATCHES})"
        )
        found = self.ranked(" UNION ALL ".join([lookup] * len(groups)), groups)
        self.insert(room, text, bands=False)
        self.db.execute("COMMIT")
        return found

    def banded(self, room: int, text: str) -> list[int]:
        self.db.execute("BEGIN IMMEDIATE")
        keys = band_keys(words_of(text, self.stop), self.bands)
        lookup = (
            "SELECT * FROM (SELECT drawer AS id FROM band WHERE room = ? AND key = ? "
            f"ORDER BY drawer DESC LIMIT {GROUP_MATCHES})"
        )
        params = [value for key in keys for value in (room, key)]
        found = self.ranked(" UNION ALL ".join([lookup] * len(keys)), params)
        self.insert(room, text, bands=True)
        self.db.execute("COMMIT")
        return found

    def ranked(self, lookups: str, params: list) -> list[int]:
        if not params:
            return []
        sql = (
            f"SELECT id, COUNT(*) AS hits FROM ({lookups}) GROUP BY id "
            f"ORDER BY hits DESC, id DESC LIMIT {RANKED}"
        )
        return [row[0] for row in self.db.execute(sql, params)]


def fill(store: Store, vocabulary: Vocabulary, size: int, rooms: int) -> None:
    store.db.execute("BEGIN")
    for index in range(size):
        store.insert(index % rooms, vocabulary.sentence(), bands=True)
    store.db.execute("COMMIT")
    store.db.execute("INSERT INTO fts(fts) VALUES ('optimize')")


def rounds(store: Store, vocabulary: Vocabulary, rng: random.Random, args) -> tuple[dict, dict]:
    """Each way's times and the planted variants it found, the ways' order alternating."""
    rows = store.db.execute(
        "SELECT id, room, content FROM drawer ORDER BY random() LIMIT ?", (args.writes,)
    )
    originals = rows.fetchall()
    ways = {
        "plain insert": store.plain,
        "word pairs (FTS5)": store.pairs,
        "band keys": store.banded,
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    found = dict.fromkeys(ways, 0)
    for round_ in range(args.writes):
        order = list(ways) if round_ % 2 else list(reversed(ways))
        original = originals[round_ // 2 % len(originals)] if round_ % 2 == 0 else None
        for name in order:
            if original is None or name == "plain insert":
                room, text = rng.randrange(args.rooms), vocabulary.sentence()
            else:
                room, text = original[1], one_typo(original[2], rng)
            begun = time.perf_counter()
            candidates = ways[name](room, text)
            times[name].append(time.perf_counter() - begun)
            if original is not None and name != "plain insert":
                found[name] += original[0] in candidates
    return times, found


def main() -> None:
    args = store_arguments(__doc__, writes=2000, bands=12, seed=0)
    rng = random.Random(args.seed)
    vocabulary = Vocabulary(rng)
    with tempfile.TemporaryDirectory() as directory:
        store = Store(Path(directory) / "bands.db", frozenset(vocabulary.common), args.bands)
        started = time.perf_counter()
        fill(store, vocabulary, args.size, args.rooms)
        print(f"filled in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        times, found = rounds(store, vocabulary, rng, args)
    planted = (args.writes + 1) // 2
    plain = statistics.mean(times["plain insert"])
    headers = ["write", "mean ms", "p50 ms", "p90 ms", "extra mean ms", "mean / plain"]
    rows = [
        [
            name,
            f"{1000 * statistics.mean(spent):.3f}",
            f"{1000 * statistics.median(spent):.3f}",
            f"{1000 * percentile(spent, 0.9):.3f}",
            f"{1000 * (statistics.mean(spent) - plain):.3f}",
            f"{statistics.mean(spent) / plain:.2f}x",
            "-" if name == "plain insert" else f"{found[name]}/{planted}",
        ]
        for name, spent in times.items()
    ]
    print(table([*headers, "typo recall"], rows))


if __name__ == "__main__":
    main()
