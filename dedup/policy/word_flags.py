"""Words worth a flag when two texts differ in them: numbers written as words, weekdays, months
and names ("Tuesday" against "Thursday", "three" against "four", "Ada" against "Alan"). A typo
changes letters; these change the fact. The review console marks them in its diffs
(`review.diff`), and a sweep's numbers gate counts the numbers and dates among them
(`merge_gates.drawer_gates`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dedup.policy import calendar_words
from dedup.policy.number_words import number_words
from dedup.policy.text import fold

WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
_SENTENCE_END = re.compile(r"[.!?:;]['\")\]]*$")
# Weekdays and months in many languages: `calendar_words`. English months that are also common
# words count only when capitalised ("May", not "may"). Numbers written as words, English's and
# other languages': `number_words`.
_AMBIGUOUS_MONTHS = frozenset(("march", "may"))


@dataclass(frozen=True)
class WordFlag:
    """Words of one kind found in one text and not in the other, as the number warning does for
    digits: "Tuesday" against "Thursday", "three" against "four", "Ada" against "Alan"."""

    kind: str
    left: tuple[str, ...]
    right: tuple[str, ...]

    @property
    def label(self) -> str:
        return FLAG_LABELS[self.kind]


FLAG_LABELS = {
    "number word": "a number written as a word",
    "weekday": "a weekday",
    "month": "a month",
    "name": "a name",
}
FLAG_KINDS = tuple(FLAG_LABELS)


def word_kinds(text: str) -> dict[str, tuple[str, str]]:
    """The words of a text worth a flag, by their folded form (`fold`: case and width), with
    their kind and their first spelling: numbers written as words, weekdays, months, and names
    (a capitalised word that does not start a sentence, a sentence's first word may be any word,
    in a text that is not written in capitals)."""
    kinds: dict[str, tuple[str, str]] = {}
    starts_sentence = True
    # In a text written in capitals every word is capitalised: none of them tells a name.
    letters = [c for c in text if c.isalpha()]
    shouting = sum(c.isupper() for c in letters) > len(letters) / 2
    for chunk in text.split():
        for word in WORD.findall(chunk):
            folded = fold(word)
            kind = _word_kind(word, folded, starts_sentence or shouting)
            if kind:
                kinds.setdefault(folded, (kind, word))
            starts_sentence = False
        starts_sentence = starts_sentence or bool(_SENTENCE_END.search(chunk))
    for weekday in calendar_words.attached_weekdays(text):
        kinds.setdefault(weekday, ("weekday", weekday))
    return kinds


def _word_kind(word: str, folded: str, no_names: bool) -> str:
    capitalised = word[0].isupper()
    if folded in calendar_words.weekdays():
        return "weekday"
    if folded in calendar_words.months() and (capitalised or folded not in _AMBIGUOUS_MONTHS):
        return "month"
    if all(part in number_words() for part in folded.split("-")):
        return "number word"
    if capitalised and not no_names:
        return "name"
    return ""


def folded_words(text: str) -> set[str]:
    return {fold(word) for word in WORD.findall(text)} | set(calendar_words.attached_weekdays(text))


def only_in(kinds: dict[str, tuple[str, str]], other: str) -> dict[str, tuple[str, str]]:
    """The flagged words of one text that the other does not hold in any case."""
    present = folded_words(other)
    return {folded: kind for folded, kind in kinds.items() if folded not in present}


def differing_words(a: str, b: str) -> list[WordFlag]:
    """Per kind, the flagged words of each text that the other lacks (case aside: "BACKUPS RUN
    ON FRIDAY" against "Backups run on Friday" flags nothing)."""
    only_left, only_right = only_in(word_kinds(a), b), only_in(word_kinds(b), a)
    flags = []
    for kind in FLAG_KINDS:
        left = tuple(word for k, word in only_left.values() if k == kind)
        right = tuple(word for k, word in only_right.values() if k == kind)
        if left or right:
            flags.append(WordFlag(kind, left, right))
    return flags
