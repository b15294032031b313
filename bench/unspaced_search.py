#!/usr/bin/env python
"""Search for a word of a script written without spaces (Chinese, Japanese, Thai), inside
sentences, and for a Korean word with its particles written onto it.

Such a sentence's index terms are pieces of it (`dedup.policy.index_text`), which hold a word
whole only where a piece happens to be that word; the index now also holds each run's pairs of
neighbouring characters, and search asks a word by its pairs (`dedup.search`). This measures
both in one run: for each script, two rooms filled through the write path with the same texts
(bench/unspaced_recall.py's made-up words), one indexed with pairs (now) and one by pieces alone
(before); then words of two to four characters cut from random stored sentences are searched in
each room (in the second as search did before: a word whole, none of two characters), and the
drawers returned are compared with those whose text holds the word (Korean: two to four
syllables cut from a stored word, particle and all; before, a Korean word of two syllables was
not searched and a longer one found only bare): *recall* is the share of
those found, *precision* the share of the drawers returned that hold it (a drawer may hold a
word's pairs apart; a Korean word is asked without its particle too, and a drawer holding it
with another particle does not hold the word as asked), *first hits* the share of the holders
among as many first hits as there are holders (R-precision: whether they rank first). Also how
much the full-text index grew with the room (SQLite: the FTS5 table's blocks after an optimize;
PostgreSQL: the GIN index's pages, then an ANALYZE), and the median time of TIMED more writes
into both rooms, interleaved (each text into one, then the other).

    .venv/bin/python bench/unspaced_search.py [--sizes 2000] [--words 300]
        [--backends sqlite,postgresql]
"""

from __future__ import annotations

import contextlib
import functools
import json
import random
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import arguments, fresh_database_url, run_children, setup_django, table
from bench.unspaced_recall import COMMA, LENGTHS, SCRIPTS, Words

INDEXINGS = ("pairs", "pieces")
# Korean writes particles onto its words (spaced): made-up stems of common syllables, half of
# them with one of these particles written on, to search by their stems.
SYLLABLES = "가나다라마바사아자차카타파하고노도로모보소오조초기니디리미비시이지치서울회의부산"
PARTICLES = ("은", "는", "이", "가", "을", "를", "에", "에서", "의", "로", "와", "도")


class KoreanWords:
    """Made-up stems of one to four syllables, drawn with a Zipf-like weight as `Words`'s,
    written in spaced sentences with a particle on about half of them."""

    def __init__(self, rng: random.Random, size: int = 3000):
        stems = sorted({"".join(rng.choices(SYLLABLES, k=rng.randint(1, 4))) for _ in range(size)})
        self.words = sorted(stems, key=lambda w: len(w) + rng.uniform(-1.5, 1.5))
        self.weights = [1 / (rank + 10) for rank in range(len(self.words))]
        self.rng = rng

    def text(self, low: int, high: int, punctuated: bool) -> str:
        target, length = self.rng.randint(low, high), 0
        words: list[str] = []
        while length < target:
            stem = self.rng.choices(self.words, weights=self.weights)[0]
            words.append(stem + (self.rng.choice(PARTICLES) if self.rng.random() < 0.5 else ""))
            length += len(words[-1])
        return " ".join(words) + ("." if punctuated else "")


def vocabulary_of(script: str, rng: random.Random) -> Words | KoreanWords:
    return KoreanWords(rng) if script == "korean" else Words(SCRIPTS[script], rng)


def runs_of(normalized: str) -> list[str]:
    """What a searched word is cut from: the runs of a script written without spaces, or
    Korean words."""
    from dedup import policy

    return policy.unspaced_runs(normalized) or policy.hangul_runs(normalized)


TIMED = 500  # writes of each indexing, interleaved, after the rooms are filled
MAX_HOLDERS = 150  # words held by more drawers are not asked: a page holds every hit (200)


def child(backend: str, size: int, words_count: int) -> None:
    setup_django(fresh_database_url(backend))
    from dedup import services

    for script in [*SCRIPTS, "korean"]:
        rng = random.Random(f"{script}-texts")
        vocabulary = vocabulary_of(script, rng)
        texts = []
        for n in range(size + TIMED):
            low, high = LENGTHS[n % len(LENGTHS)]
            texts.append(vocabulary.text(low, high, punctuated=n % 2 == 1))
        rooms, grown = {}, {}
        for indexing in INDEXINGS:  # one room after the other: the index's growth apart
            with pieces_alone(indexing == "pieces"):
                rooms[indexing] = services.room_get_or_create(
                    wing=backend, room=f"{script}-{indexing}"
                )
                before = index_bytes()
                for text in texts[:size]:
                    services.drawer_write(room=rooms[indexing], content=text)
                grown[indexing] = index_bytes() - before
        timings: dict[str, list[float]] = {indexing: [] for indexing in INDEXINGS}
        for text in texts[size:]:  # then the timed writes, each text into both, interleaved
            for indexing in INDEXINGS:
                with pieces_alone(indexing == "pieces"):
                    started = time.perf_counter()
                    services.drawer_write(room=rooms[indexing], content=text)
                    timings[indexing].append((time.perf_counter() - started) * 1000)
        for indexing in INDEXINGS:
            with pieces_alone(indexing == "pieces"):
                room = rooms[indexing]
                found = searched(room, texts, words_count, f"{script}-words", indexing)
            print(
                json.dumps(
                    {
                        "backend": backend,
                        "script": script,
                        "indexing": indexing,
                        "write_ms": statistics.median(timings[indexing]),
                        "index_kb": grown[indexing] / 1024,
                        **found,
                    }
                ),
                flush=True,
            )


@contextlib.contextmanager
def pieces_alone(before: bool):
    """With `before`, index texts without pairs (`pairs=False`, as dedup 0019's reverse computes
    them: nor Korean words' pairs, dedup 0020's), wherever `index_text` is called from."""
    from dedup import policy
    from dedup.policy import text

    today = text.index_text
    if before:
        for owner in (policy, text):
            setattr(owner, "index_text", functools.partial(today, pairs=False))  # noqa: B010
    try:
        yield
    finally:
        for owner in (policy, text):
            setattr(owner, "index_text", today)  # noqa: B010


def index_bytes() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("ANALYZE palace_drawer")  # as autovacuum would have, for search's plan
            cursor.execute("SELECT pg_relation_size('palace_drawer_fulltext')")
        else:
            cursor.execute("INSERT INTO palace_drawer_fts(palace_drawer_fts) VALUES ('optimize')")
            cursor.execute("SELECT sum(length(block)) FROM palace_drawer_fts_data")
        return cursor.fetchone()[0] or 0


def searched(room, texts, words_count, seed, indexing) -> dict[str, float]:
    from dedup import policy
    from dedup.search import drawers_search
    from palace.models import Drawer

    stored = dict(Drawer.objects.filter(room=room).values_list("id", "normalized_content"))
    rng = random.Random(seed)
    truths = found = returned = first = 0
    timings = []
    asked = 0
    while asked < words_count:
        run = rng.choice(runs_of(policy.normalize_text(rng.choice(texts))))
        if len(run) < 2:
            continue
        length = min(len(run), rng.randint(2, 4))
        at = rng.randrange(len(run) - length + 1)
        word = run[at : at + length]
        holders = {pk for pk, text in stored.items() if word in text}
        if len(holders) > MAX_HOLDERS:
            continue
        asked += 1
        started = time.perf_counter()
        hits = (before_search if indexing == "pieces" else drawers_search)(
            query=word, wing=room.wing.name, room=room.name, limit=200
        ).hits
        timings.append((time.perf_counter() - started) * 1000)
        pks = {hit.drawer.pk for hit in hits}
        first += len(holders & {hit.drawer.pk for hit in hits[: len(holders)]})
        truths += len(holders)
        found += len(holders & pks)
        returned += len(pks)
    return {
        "recall": found / max(1, truths),
        "precision": found / max(1, returned),
        "r_precision": first / max(1, truths),
        "held": truths / asked,
        "returned": returned,
        "search_ms": statistics.median(timings),
    }


def before_search(*, query: str, wing: str, room: str, limit: int) -> SimpleNamespace:
    """Search as it was before pairs: the query's words (a short run whole, a long one's
    pieces) in the write path's groups; a word of two characters was none."""
    from dedup import candidates, policy
    from palace import selectors

    groups = candidates.lexical_groups(policy.query_words(query))
    if not groups:
        return SimpleNamespace(hits=[])
    found = selectors.drawers_matching(groups=groups, wing=wing, room=room, limit=limit)
    return SimpleNamespace(hits=found)


def main() -> None:
    args = arguments(__doc__, sizes="2000", words=300)
    if args.child:
        child(args.child, args.sizes[0], args.words)
        return
    rows = [
        [
            r["backend"],
            r["script"],
            "pairs (now)" if r["indexing"] == "pairs" else "pieces (before)",
            f"{100 * r['recall']:.1f}%",
            f"{100 * r['precision']:.1f}%" if r["returned"] else "none returned",
            f"{100 * r['r_precision']:.1f}%",
            f"{r['held']:.1f}",
            f"{r['search_ms']:.2f}",
            f"{r['write_ms']:.2f}",
            f"{r['index_kb']:,.0f}",
        ]
        for r in run_children(__file__, args.backends)
    ]
    headers = ["backend", "script", "index", "recall", "precision", "first hits", "holders/word"]
    print(table([*headers, "search p50 ms", "write p50 ms", "index KB"], rows))
    print(
        f"\n{args.sizes[0]:,} drawers a room; {args.words} words of 2-4 characters a room, each "
        f"held by at most {MAX_HOLDERS} drawers; {COMMA} punctuates half the texts; {TIMED} timed "
        "writes of each index, interleaved."
    )


if __name__ == "__main__":
    main()
