"""A corruption generator for the recall benchmark: the kinds of damage real duplicates carry,
not random uniform typos.

- keyboard typos (a neighbouring key pressed instead, as well, or two keys swapped) and OCR
  confusions (rn/m, cl/d, l/1, O/0, e/c, h/b, vv/w), in a word chosen with a weight growing with
  its length: names and places, the longest words, are the ones mistyped and misread;
- two words run together (a long word no original holds) and a long word split in two;
- abbreviations of long words (department -> dept., information -> info.);
- and, in the rooms themselves, template words common to the whole room (`Room.template`).

Hand-written: the benchmark must measure the design, not a tuning to a public record-linkage
dataset, so none is used.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

KEYBOARD = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
OCR = [("rn", "m"), ("m", "rn"), ("cl", "d"), ("d", "cl"), ("l", "1"), ("o", "0"), ("e", "c")]
OCR += [("h", "b"), ("w", "vv"), ("i", "l"), ("u", "ii"), ("s", "5")]
KINDS = ("keyboard", "ocr", "join", "split", "abbreviation")
KIND_WEIGHTS = (40, 20, 15, 15, 10)
# Room templates: long words every drawer of a room repeats (a form, a report's headings).
TEMPLATE_WORDS = [
    "incident",
    "postmortem",
    "infrastructure",
    "deployment",
    "retrospective",
    "customer",
    "escalation",
    "department",
    "configuration",
    "maintenance",
    "observations",
    "recommendation",
    "summary",
    "quarterly",
    "engineering",
    "operations",
]


def _neighbours(letter: str) -> str:
    for row_index, row in enumerate(KEYBOARD):
        column = row.find(letter)
        if column < 0:
            continue
        near = row[max(0, column - 1) : column] + row[column + 1 : column + 2]
        for other in (row_index - 1, row_index + 1):
            if 0 <= other < len(KEYBOARD):
                near += KEYBOARD[other][max(0, column - 1) : column + 1]
        return near
    return "e"


def _pick_word(words: list[str], rng: random.Random, minimum: int = 4) -> int | None:
    """A word's index, weighted by the square of its length: long words take the damage."""
    eligible = [i for i, w in enumerate(words) if len(w) >= minimum]
    if not eligible:
        return None
    return rng.choices(eligible, weights=[len(words[i]) ** 2 for i in eligible])[0]


def keyboard(word: str, rng: random.Random) -> str:
    j = rng.randrange(1, len(word) - 1)
    kind = rng.choice(["substitute", "insert", "drop", "swap"])
    if kind == "substitute":
        return word[:j] + rng.choice(_neighbours(word[j].lower())) + word[j + 1 :]
    if kind == "insert":
        return word[:j] + rng.choice(_neighbours(word[j].lower())) + word[j:]
    if kind == "drop":
        return word[:j] + word[j + 1 :]
    return word[:j] + word[j + 1] + word[j] + word[j + 2 :]


def ocr(word: str, rng: random.Random) -> str:
    options = [(a, b) for a, b in OCR if a in word[1:]]
    if not options:
        return keyboard(word, rng)
    a, b = rng.choice(options)
    at = word.index(a, 1)
    return word[:at] + b + word[at + len(a) :]


def abbreviation(word: str, rng: random.Random) -> str:
    return word[: rng.randint(3, 4)] + "."


@dataclass
class Corrupted:
    text: str
    kinds: list[str] = field(default_factory=list)


def corrupt(text: str, rng: random.Random, events: int) -> Corrupted:
    """`text` with `events` corruptions, each of a kind drawn with KIND_WEIGHTS."""
    words = text.split(" ")
    kinds = []
    for _ in range(events):
        kind = rng.choices(KINDS, weights=KIND_WEIGHTS)[0]
        if kind == "join":
            if len(words) < 2:
                continue
            # Two neighbours, the longer the pair the likelier (long names run together).
            pairs = range(len(words) - 1)
            i = rng.choices(pairs, weights=[len(words[k] + words[k + 1]) ** 2 for k in pairs])[0]
            words[i : i + 2] = [words[i].rstrip(".,") + words[i + 1]]
        else:
            picked = _pick_word(words, rng, minimum=7 if kind in ("split", "abbreviation") else 4)
            if picked is None:
                continue
            i, word = picked, words[picked]
            if kind == "keyboard":
                words[i] = keyboard(word, rng)
            elif kind == "ocr":
                words[i] = ocr(word, rng)
            elif kind == "split":
                at = rng.randrange(3, len(word) - 3)
                words[i : i + 1] = [word[:at], word[at:]]
            else:
                words[i] = abbreviation(word, rng)
        kinds.append(kind)
    return Corrupted(" ".join(words), kinds)


class Room:
    """A room's texts: sentences of the shared vocabulary framed by the room's template words."""

    def __init__(self, vocabulary, rng: random.Random, template_words: int = 4):
        self.vocabulary = vocabulary
        self.rng = rng
        self.template = rng.sample(TEMPLATE_WORDS, template_words)

    def text(self) -> str:
        head = [w for w in self.template[:-1] if self.rng.random() < 0.9]
        tail = self.template[-1:] if self.rng.random() < 0.9 else []
        body = self.vocabulary.sentence()
        return " ".join([*(w.capitalize() for w in head[:1]), *head[1:], body, *tail])
