#!/usr/bin/env python
"""Recall of one-character variants in scripts written without spaces (Chinese, Japanese, Thai).

A sentence of such a script is one "word" of its normalised text: when the full-text index held
it whole, a variant broke that one word and the candidate query found nothing by it (only the
other sentences of a punctuated text could). The index now holds the pieces of each long run
(`dedup.policy.index_text`), which an edit breaks one or two of. This measures both, in one run:
for each script, two rooms filled through the write path with the same texts, one indexed by
pieces and one as before (`index_text` off), and in each the share of planted one-character
variants (a character substituted, inserted or dropped; still near their original by the
policy: within reach) that find their original among the write path's candidates, by the
original's length and with or without punctuation. Nothing is written while measuring.

The texts are made of words of one to four characters of each script, drawn with a Zipf-like
frequency (a real text's common words recur), written with no punctuation or with a comma every
few words.

    .venv/bin/python bench/unspaced_recall.py [--sizes 2000] [--originals 400]
        [--backends sqlite,postgresql]
"""

from __future__ import annotations

import contextlib
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import arguments, fresh_database_url, run_children, setup_django, table

COMMA = "\uff0c"  # the full-width comma of Chinese and Japanese text
SCRIPTS = {
    "chinese": (
        "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着"
        "去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主"
        "行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二"
        "理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走"
        "电四第门相次东政海口使教西再平真听世气信北少关并内加"
    ),
    "japanese": (
        "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらり"
        "るれろわをんがぎぐげござじずぜぞだでどばびぶべぼアイウエオカキクケコサシスセソタ"
        "チツテトナニヌネノハヒフヘホマミムメモラリルレロワンー日本人会社時間今年私学校先"
        "生電話仕事東京新聞語書読見行来言思"
    ),
    "thai": "กขคงจฉชซฌญฎฏฐฑฒณดตถทธนบปผฝพฟภมยรลวศษสหฬอฮะาำเแโใไ",
}
LENGTHS = ((12, 20), (21, 40), (41, 120))
THRESHOLD_NOTE = "within reach: the policy would link them (near, 12 characters or more)"


class Words:
    """Made-up words of a script, the frequent ones short, drawn with a Zipf-like weight."""

    def __init__(self, alphabet: str, rng: random.Random, size: int = 3000):
        words = sorted({"".join(rng.choices(alphabet, k=rng.randint(1, 4))) for _ in range(size)})
        self.words = sorted(words, key=lambda w: len(w) + rng.uniform(-1.5, 1.5))
        self.weights = [1 / (rank + 10) for rank in range(len(self.words))]
        self.rng = rng

    def text(self, low: int, high: int, punctuated: bool) -> str:
        target = self.rng.randint(low, high)
        out, since_comma = "", 0
        while len(out.replace(COMMA, "")) < target:
            out += self.rng.choices(self.words, weights=self.weights)[0]
            since_comma += 1
            if punctuated and since_comma >= self.rng.randint(3, 6):
                out, since_comma = out + COMMA, 0
        return out.rstrip(COMMA) + "。"


def one_edit(text: str, alphabet: str, rng: random.Random) -> str:
    letters = [i for i, c in enumerate(text) if c in alphabet]
    at = rng.choice(letters)
    kind = rng.choice("sid")
    if kind == "s":
        return text[:at] + rng.choice(alphabet) + text[at + 1 :]
    if kind == "i":
        return text[:at] + rng.choice(alphabet) + text[at:]
    return text[:at] + text[at + 1 :]


def child(backend: str, sizes: list[int], originals_count: int) -> None:
    setup_django(fresh_database_url(backend))
    from dedup import services

    threshold = services.DedupConfig.from_settings().near_threshold
    for script, alphabet in SCRIPTS.items():
        rng = random.Random(f"{script}-texts")
        words = Words(alphabet, rng)
        texts = []
        for n in range(sizes[0]):
            low, high = LENGTHS[n % len(LENGTHS)]
            texts.append(words.text(low, high, punctuated=n % 2 == 1))
        picked = random.Random(f"{script}-variants").sample(range(len(texts)), originals_count)
        for indexing in ("pieces", "whole"):
            with as_before(indexing == "whole"):
                room = services.room_get_or_create(wing=backend, room=f"{script}-{indexing}")
                ids = [services.drawer_write(room=room, content=text).drawer.pk for text in texts]
                report(backend, script, indexing, room, texts, ids, picked, threshold, alphabet)


@contextlib.contextmanager
def as_before(before: bool):
    """With `before`, the code as it was before index texts: the policy's `index_text` and
    `is_unspaced` answer None and False wherever they are called from (the package's names
    and the module's own, which `query_words_of_normalized` calls), for the room's writes and
    queries alike."""
    from dedup import policy
    from dedup.policy import text

    saved = [(o, n, getattr(o, n)) for o in (policy, text) for n in ("index_text", "is_unspaced")]
    if before:
        for owner, name, _ in saved:
            setattr(owner, name, (lambda _: None) if name == "index_text" else (lambda _: False))
    try:
        yield
    finally:
        for owner, name, function in saved:
            setattr(owner, name, function)


def report(backend, script, indexing, room, texts, ids, picked, threshold, alphabet) -> None:
    from dedup import candidates, policy, services

    scope = candidates.Scope(room=room)
    rng = random.Random(f"{script}-edits")
    found: dict[str, list[int]] = {}
    for index in picked:
        original = texts[index]
        variant = policy.Text.of(one_edit(original, alphabet, rng))
        if policy.assess(variant, policy.Text.of(original), threshold=threshold).verdict is None:
            continue  # out of reach: the policy would not link it (not near, or too short)
        length = len(policy.normalize_text(original).replace(" ", ""))
        low, high = next((band for band in LENGTHS if length <= band[1]), LENGTHS[-1])
        band = f"{low}-{high}" if (low, high) != LENGTHS[-1] else f"{low}+"
        key = f"{band}|{'punctuated' if COMMA in original else 'unpunctuated'}"
        hits = services.candidates_for_text(scope, variant, threshold=threshold)
        counts = found.setdefault(key, [0, 0])
        counts[0] += any(c.id == ids[index] for c in [*hits.same, *hits.lexical])
        counts[1] += 1
    print(
        json.dumps(
            {"backend": backend, "script": script, "indexing": indexing, "found": found},
        ),
        flush=True,
    )


def main() -> None:
    args = arguments(__doc__, sizes="2000", originals=400)
    if args.child:
        child(args.child, args.sizes, args.originals)
        return
    results = list(run_children(__file__, args.backends))
    keys = sorted({key for r in results for key in r["found"]})
    rows = []
    for backend in args.backends.split(","):
        for script in SCRIPTS:
            by = {
                r["indexing"]: r["found"]
                for r in results
                if r["backend"] == backend and r["script"] == script
            }
            for key in keys:
                band, style = key.split("|")
                cells = []
                for indexing in ("pieces", "whole"):
                    hit, planted = by.get(indexing, {}).get(key, [0, 0])
                    cells.append(f"{hit}/{planted} ({100 * hit / max(1, planted):.1f}%)")
                rows.append([backend, script, style, band, *cells])
    print(
        table(
            ["backend", "script", "text", "characters", "pieces (now)", "whole runs (before)"],
            rows,
        )
    )
    print(f"\n{args.sizes[0]:,} drawers a room; variants {THRESHOLD_NOTE}.")


if __name__ == "__main__":
    main()
