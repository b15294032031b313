#!/usr/bin/env python
"""Recall on realistic corruption: of the pairs within reach (a new drawer and an older one of its
room that the pure policy links, judged against every drawer of the room), how many the write path
links, through `services.drawer_write`, on SQLite and PostgreSQL.

The room repeats template words in every drawer (bench/corruption.py), and the variants carry
one to four corruptions each: keyboard and OCR-like typos weighted toward long words, words run
together or split, abbreviations. A variant is planted only when its original is still within
reach; the other pairs within reach (with earlier variants, or chance neighbours) count too.
Each dedup write is interleaved with a plain insert of a new text, for the cost ratio.

    .venv/bin/python bench/recall.py [--sizes 20000] [--variants 1000] [--backends sqlite]
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from bisect import bisect_left, bisect_right
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import (
    Vocabulary,
    arguments,
    drawer_row,
    fresh_database_url,
    run_children,
    settle,
    setup_django,
    summary,
    table,
)
from bench.corruption import Room, corrupt
from bench.recall_misses import WordIndex, broken_by, groups_of, why_missed

EVENTS = (1, 2, 3, 4)
EVENT_WEIGHTS = (35, 30, 20, 15)
WARM_UP_WRITES = 500


class Judge:
    """Every current drawer of the room by normalised length, to find the pairs within reach of
    a new text by the pure policy (rapidfuzz over the length band, then `policy.assess`)."""

    def __init__(self, threshold: float):
        self.threshold = threshold
        self.lengths: list[int] = []
        self.rows: list[tuple[int, Any]] = []  # (id, policy.Text)
        self.index = WordIndex()  # for the reasons of misses

    def add(self, drawer_id: int, text) -> None:
        at = bisect_right(self.lengths, len(text.normalized))
        self.lengths.insert(at, len(text.normalized))
        self.rows.insert(at, (drawer_id, text))
        self.index.add(drawer_id, text.normalized)

    def within_reach(self, text) -> set[int]:
        from rapidfuzz import process
        from rapidfuzz.distance import OSA

        from dedup import policy

        low, high = policy.near_length_range(len(text.normalized), self.threshold)
        start = bisect_left(self.lengths, low)
        end = len(self.rows) if high is None else bisect_right(self.lengths, high)
        band = self.rows[start:end]
        near = process.extract(
            text.normalized,
            [row[1].normalized for row in band],
            scorer=OSA.normalized_similarity,
            score_cutoff=self.threshold - 0.01,
            limit=None,
        )
        return {
            band[index][0]
            for _, _, index in near
            if policy.assess(text, band[index][1], threshold=self.threshold).verdict is not None
        }


def fill(room, texts: list[str], judge: Judge) -> None:
    from dedup import policy
    from palace.models import Drawer

    for start in range(0, len(texts), 2000):
        rows = [drawer_row(room, text) for text in texts[start : start + 2000]]
        for drawer in Drawer.objects.bulk_create(rows):
            judge.add(drawer.pk, policy.Text.of(drawer.content))


def plant(judge: Judge, room_texts: dict[int, str], rng: random.Random, count: int):
    """(original id, Corrupted) for `count` variants still within reach of their original."""
    from dedup import policy

    originals = rng.sample(sorted(room_texts), min(len(room_texts), 3 * count))
    planted = []
    for original_id in originals:
        variant = corrupt(room_texts[original_id], rng, rng.choices(EVENTS, EVENT_WEIGHTS)[0])
        text, old = policy.Text.of(variant.text), policy.Text.of(room_texts[original_id])
        if text.normalized == old.normalized:
            continue
        if policy.assess(text, old, threshold=judge.threshold).verdict is None:
            continue
        planted.append((original_id, variant))
        if len(planted) == count:
            break
    return planted


def explain(room, judge: Judge, text, original_id: int, new_id: int, groups: int) -> str:
    """Why the write did not link `original_id` (bench/recall_misses.py), with the groups and
    the words that broke them printed under BENCH_DEBUG."""
    from dedup import candidates, policy, services

    word_groups = groups_of(room.id, text.normalized, groups or candidates.LEXICAL_GROUPS)
    low, high = policy.near_length_range(len(text.normalized), judge.threshold)
    length = len(next(t for i, t in judge.rows if i == original_id).normalized)
    in_band = low <= length <= (high or length) or length > policy.EDIT_DISTANCE_LIMIT
    scope = candidates.Scope(room=room, exclude_id=new_id)
    found = services.candidates_for_text(
        scope, text, threshold=judge.threshold, groups=groups or candidates.LEXICAL_GROUPS
    )
    ids = [c.id for c in (*found.same, *found.lexical)]
    if os.environ.get("BENCH_DEBUG"):
        broken = broken_by(word_groups, judge.index.words[original_id])
        print(f"  groups {word_groups}, broken by {broken}", file=sys.stderr)
    return why_missed(judge.index, word_groups, original_id, in_band, ids)


def measure(room, judge: Judge, planted, texts: dict[int, str], new_text, groups: int) -> dict:
    """Write each planted variant through the write path, interleaved with a plain insert of
    `new_text()`; the pairs within reach it linked, by kind of corruption, and both costs."""
    from django.db import transaction

    from dedup import policy, services

    reach_total = reach_found = original_found = 0
    by_kind: Counter[str] = Counter()
    by_kind_found: Counter[str] = Counter()
    misses: Counter[str] = Counter()
    misses_by_kind: Counter[str] = Counter()
    dedup_times, plain_times = [], []
    for original_id, variant in planted:
        text = policy.Text.of(variant.text)
        reach = judge.within_reach(text)
        started = time.perf_counter()
        result = services.drawer_write(room=room, content=variant.text)
        dedup_times.append(time.perf_counter() - started)
        linked = {link.older_id for link in result.links}
        reach_total += min(len(reach), services.MAX_LINKS_PER_WRITE)
        reach_found += len(reach & linked)
        hit = original_id in linked
        original_found += hit
        for kind in set(variant.kinds):
            by_kind[kind] += 1
            by_kind_found[kind] += hit
        if not hit:
            reason = explain(room, judge, text, original_id, result.drawer.pk, groups)
            misses[reason] += 1
            for kind in set(variant.kinds):
                misses_by_kind[f"{reason}: {kind}"] += 1
            if os.environ.get("BENCH_DEBUG"):
                print(
                    f"missed {variant.kinds} ({reason}): {texts[original_id]!r} -> "
                    f"{variant.text!r}",
                    file=sys.stderr,
                )
        judge.add(result.drawer.pk, text)

        plain = new_text()
        started = time.perf_counter()
        with transaction.atomic():
            drawer_row(room, plain).save()
        plain_times.append(time.perf_counter() - started)
    return {
        "planted": len(planted),
        "original_found": original_found,
        "reach": reach_total,
        "reach_found": reach_found,
        "by_kind": {k: [by_kind_found[k], by_kind[k]] for k in sorted(by_kind)},
        "misses": dict(misses.most_common()),
        "misses_by_kind": dict(misses_by_kind.most_common()),
        "dedup": summary(dedup_times),
        "plain": summary(plain_times),
    }


def child(backend: str, sizes: list[int], variants: int, groups: int, seen: int) -> None:
    setup_django(fresh_database_url(backend))

    from dedup import policy, services
    from dedup.candidates import room_words

    if seen >= 0:  # another number of pairs of seen words than the write path's
        room_words.SEEN_GROUPS = seen

    if groups:  # another number of word groups than the write path's, to compare designs
        defaults = services.similarity.candidates_for_text.__kwdefaults__
        assert defaults is not None
        defaults["groups"] = groups

    rng = random.Random(29)
    room_texts_gen = Room(Vocabulary(rng), rng)
    room = services.room_get_or_create(wing="bench", room="recall")
    judge = Judge(services.DedupConfig.from_settings().near_threshold)
    texts: dict[int, str] = {}
    present = 0
    for size in sizes:
        new = [room_texts_gen.text() for _ in range(max(0, size - present - WARM_UP_WRITES))]
        fill(room, new, judge)
        settle()
        for _ in range(WARM_UP_WRITES):
            written = services.drawer_write(room=room, content=room_texts_gen.text())
            judge.add(written.drawer.pk, policy.Text.of(written.drawer.content))
        texts = dict(room.drawers.values_list("id", "content"))
        present = len(texts)
        planted = plant(judge, texts, rng, variants)

        result = measure(room, judge, planted, texts, room_texts_gen.text, groups)
        print(json.dumps({"backend": backend, "size": present, **result}), flush=True)
        present += 2 * len(planted)


def percent(found: int, total: int) -> str:
    return f"{found}/{total} ({100 * found / max(1, total):.1f}%)"


def main() -> None:
    args = arguments(__doc__, sizes="20000", variants=1000, groups=0, seen=-1)
    if args.child:
        child(args.child, args.sizes, args.variants, args.groups, args.seen)
        return
    rows = []
    kinds: list[str] = []
    results = list(run_children(__file__, args.backends))
    for r in results:
        kinds = kinds or sorted(r["by_kind"])
        d, p = r["dedup"], r["plain"]
        rows.append(
            [
                r["backend"],
                f"{r['size']:,}",
                percent(r["reach_found"], r["reach"]),
                percent(r["original_found"], r["planted"]),
                *(percent(*r["by_kind"].get(kind, [0, 0])) for kind in kinds),
                f"{p['per_second'] / d['per_second']:.2f}x",
                f"{d['p50_ms']:.2f} / {d['p99_ms']:.2f}",
            ]
        )
    headers = ["backend", "room size", "pairs within reach linked", "originals linked"]
    headers += [f"with {kind}" for kind in kinds] + ["cost ratio", "dedup p50 / p99 ms"]
    print(table(headers, rows))
    for r in results:
        print(f"{r['backend']} misses by reason: {r['misses']}")
        print(f"{r['backend']} misses by reason and kind: {r['misses_by_kind']}")


if __name__ == "__main__":
    main()
