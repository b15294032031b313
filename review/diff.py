"""Word- and character-level differences between two texts, for a curator to see at a glance
what a near duplicate changed, and whether a number or a date is among the changes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

_TOKEN = re.compile(r"\s+|[^\s]+")
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")


@dataclass(frozen=True)
class Segment:
    op: str  # "equal", "delete" (only in the left text), "insert" (only in the right text)
    text: str

    @property
    def has_digit(self) -> bool:
        return any(c.isdigit() for c in self.text)


def _chars(a: str, b: str) -> tuple[list[Segment], list[Segment]]:
    left, right = [], []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            left.append(Segment("equal", a[i1:i2]))
            right.append(Segment("equal", b[j1:j2]))
        else:
            if i2 > i1:
                left.append(Segment("delete", a[i1:i2]))
            if j2 > j1:
                right.append(Segment("insert", b[j1:j2]))
    return left, right


def side_by_side(a: str, b: str) -> tuple[list[Segment], list[Segment]]:
    """Segments of the left (older) and right (newer) text. Words are compared first; a word
    replaced by one word is compared letter by letter, so a typo shows as one letter."""
    words_a, words_b = _TOKEN.findall(a), _TOKEN.findall(b)
    left: list[Segment] = []
    right: list[Segment] = []
    matcher = SequenceMatcher(None, words_a, words_b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        old, new = "".join(words_a[i1:i2]), "".join(words_b[j1:j2])
        if op == "equal":
            left.append(Segment("equal", old))
            right.append(Segment("equal", new))
        elif op == "replace" and i2 - i1 == j2 - j1 == 1:
            chars_left, chars_right = _chars(old, new)
            left += chars_left
            right += chars_right
        else:
            if old:
                left.append(Segment("delete", old))
            if new:
                right.append(Segment("insert", new))
    return left, right


def numbers(text: str) -> list[str]:
    return _NUMBER.findall(text)


def differing_numbers(a: str, b: str) -> tuple[list[str], list[str]]:
    """Numbers (and dates, times, versions) found in one text and not the other. "use port 8080"
    against "use port 8081" is a near miss, not a typo: the curator is warned."""
    left, right = numbers(a), numbers(b)
    only_left = [n for n in left if n not in right]
    only_right = [n for n in right if n not in left]
    return only_left, only_right
