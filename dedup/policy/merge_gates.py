"""What a sweep proposes and when a proposal may be merged: the tiers a sweep finds and the
gates a drawer pair must pass. Shared by the sweep's writes and its reads, and by the review
console's warnings (`differing_numbers`, `text_differences`): what a curator is warned of on an
item, what a cluster's page leaves open, what a bulk merge skips."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from dedup.errors import InvalidInput
from dedup.policy import numerals
from dedup.policy.text import normalize_text
from dedup.policy.word_flags import WordFlag, changed_symbols, changed_words, differing_words

DRAWER_TIERS = ("exact", "normalized", "near")
ENTITY_TIERS = ("exact", "normalized", "alias", "typo", "possible")
MERGE_TIERS = ("exact", "normalized")
# The words the numbers gate counts beside digits: "one day" against "two days" is a number
# changed, "on Monday" against "on Friday" a date (names are the entities gate's).
DATE_OR_NUMBER_WORDS = ("number word", "weekday", "month")
# A drawer pair's (`drawer_gates`). A proposal stored before a gate was added has no verdict for
# it: it does not apply (None), as a gate it could not have failed.
GATES = ("same_kind", "same_entities", "numbers_differ", "symbols_differ")
TIERS = tuple(sorted({*DRAWER_TIERS, *ENTITY_TIERS}))  # a tier of either kind of sweep
# Digits of any script, joined by a separator in the usual width or full-width (an input method
# types "１５：３０" whole).
_NUMBER = re.compile(r"\d+(?:[.,:/\-．，：／－]\d+)*")
_USUAL_SEPARATORS = str.maketrans("．，：／－", ".,:/-")


class Memory(Protocol):
    """What the gates read of a drawer."""

    kind: str
    content: str


def tiers_chosen(tiers: Iterable[str] | None, *, entities: bool) -> set[str]:
    """The tiers an application of a sweep covers: those named, or every tier of the sweep's
    kind when none is named (None). Refused when a name is no tier of the sweep's kind (a typo, or
    an entity tier on a drawer sweep, would otherwise apply nothing, "in a tier not chosen") or
    the list is empty (which would apply every tier)."""
    kind = ENTITY_TIERS if entities else DRAWER_TIERS
    if tiers is None:
        return set(kind)
    chosen = set(tiers)
    unknown = sorted(chosen - set(kind))
    sweep = "an entity sweep" if entities else "a drawer sweep"
    if unknown:
        raise InvalidInput(
            f"tiers: {sweep} has no tier {', '.join(unknown)}; its tiers are {', '.join(kind)}.",
            details={"field": "tiers"},
        )
    if not chosen:
        raise InvalidInput(
            f"tiers: name at least one of {', '.join(kind)} (or leave tiers out for every tier).",
            details={"field": "tiers"},
        )
    return chosen


def drawer_gates(
    newer: Memory, older: Memory, newer_entities: set[int], older_entities: set[int]
) -> dict[str, bool | None]:
    """Each gate is True (passed), False (failed) or None (does not apply)."""
    only_older, only_newer = differing_numbers(older.content, newer.content)
    words = differing_words(older.content, newer.content)
    return {
        # An event and the state it produced are not duplicates.
        "same_kind": (newer.kind == older.kind) if newer.kind and older.kind else None,
        # The same words about different people are not duplicates.
        "same_entities": (newer_entities == older_entities)
        if newer_entities and older_entities
        else None,
        # "port 8080" against "port 8081", "one day" against "two days", "Monday" and "Friday".
        "numbers_differ": bool(only_older or only_newer)
        or any(flag.kind in DATE_OR_NUMBER_WORDS for flag in words),
        # "deploys allowed: ✅" against "deploys allowed: ❌": the same words, a normalized pair.
        "symbols_differ": changed_symbols(older.content, newer.content) is not None,
    }


def with_symbols_gate(gates: Mapping[str, object], texts: Mapping[str, str]) -> dict[str, object]:
    """A stored pair's gates with `symbols_differ` asked of its texts (`older`, `newer`) when
    they predate it: a proposal made before that gate would otherwise pass it, and an apply
    merge "✅" into "❌"."""
    if "symbols_differ" in gates:
        return dict(gates)
    older, newer = texts.get("older", ""), texts.get("newer", "")
    return {**gates, "symbols_differ": changed_symbols(older, newer) is not None}


def gates_pass(gates: Mapping[str, object]) -> bool:
    return (
        gates.get("same_kind") is not False
        and gates.get("same_entities") is not False
        and not gates.get("numbers_differ")
        and not gates.get("symbols_differ")
    )


def numbers(text: str) -> list[str]:
    """Digits of any script, and the numerals of Chinese and Japanese that are numbers."""
    return _NUMBER.findall(text) + numerals.numbers(text)


def differing_numbers(a: str, b: str) -> tuple[list[str], list[str]]:
    """Numbers (and dates, times, versions) found in one text and not the other, as written. "use
    port 8080" against "use port 8081" is a near miss, not a typo: the curator is warned. Digits
    are compared by value whatever their script: "15", "١٥" and "１５" are one number."""
    left, right = numbers(a), numbers(b)
    left_values, right_values = set(map(_value, left)), set(map(_value, right))
    only_left = [n for n in left if _value(n) not in right_values]
    only_right = [n for n in right if _value(n) not in left_values]
    return only_left, only_right


def _value(number: str) -> str:
    """A number's digits in ASCII (every character `\\d` matches has a decimal value), and its
    separators in the usual width; numerals, their value (`numerals.value`)."""
    if number[0] in numerals.NUMERALS:
        return numerals.value(number)
    return "".join(str(unicodedata.decimal(c, c)) for c in number).translate(_USUAL_SEPARATORS)


@dataclass(frozen=True)
class Differences:
    """What two texts differ in that a curator is warned of before they are merged: numbers
    (dates, times, versions: `differing_numbers`), words flagged by kind (names, weekdays,
    months, numbers written as words: `differing_words`), any other word (`changed_words`) and
    symbols (`changed_symbols`: "✅" against "❌").
    A wrong merge is worse than a missed one: texts that differ only in case, punctuation,
    spacing or a typo warn of nothing, any other difference may be another fact."""

    numbers_left: tuple[str, ...] = ()
    numbers_right: tuple[str, ...] = ()
    words: tuple[WordFlag, ...] = ()

    @property
    def warns(self) -> bool:
        return bool(self.numbers_left or self.numbers_right or self.words)

    @property
    def labels(self) -> list[str]:
        """What differs, in the console's words: "a number or a date", "a name", "a word"."""
        numbers = ["a number or a date"] if self.numbers_left or self.numbers_right else []
        return numbers + [flag.label for flag in self.words]

    @property
    def reason(self) -> str:
        """Why a merge of the two is not made unseen (empty when it may be)."""
        return f"the texts differ in {', '.join(self.labels)}" if self.warns else ""


def text_differences(a: str, b: str, *, other_words: bool = True) -> Differences:
    """The `Differences` of two texts (composed first: the same words typed decomposed are the
    same). `other_words=False` leaves out `changed_words`: for names (an entity sweep's texts),
    whose every word is flagged by kind if flagged at all."""
    a, b = unicodedata.normalize("NFC", a), unicodedata.normalize("NFC", b)
    only_a, only_b = differing_numbers(a, b)
    flags = differing_words(a, b)
    # The same words to `normalize_text` (case, punctuation, spacing aside) change no word.
    same_words = normalize_text(a) == normalize_text(b)
    if other_words and not same_words and (other := changed_words(a, b)) is not None:
        flags.append(other)
    if (symbols := changed_symbols(a, b)) is not None:
        flags.append(symbols)
    return Differences(tuple(only_a), tuple(only_b), tuple(flags))


def name_differences(a: str, b: str) -> Differences:
    """Two names' `Differences` in numbers alone: "server-01" against "server-02" differ; "Ada"
    against "Ada L." may be one person (a name's words are names, so names differing say
    nothing)."""
    only_a, only_b = differing_numbers(a, b)
    return Differences(tuple(only_a), tuple(only_b))
