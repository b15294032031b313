"""Words worth a flag when two texts differ in them: numbers written as words, weekdays, months
and names ("Tuesday" against "Thursday", "three" against "four", "Ada" against "Alan"), and any
other word but for a typo (`changed_words`: "dark" against "light"). A typo changes letters;
these change the fact, and so does a symbol (`changed_symbols`: "✅" against "❌"). The review
console marks the words in its diffs (`review.diff`) and warns of all of them before a merge
(`merge_gates.text_differences`); a sweep's numbers gate counts the numbers and dates among
them, its symbols gate the symbols (`merge_gates.drawer_gates`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import regex

from dedup.policy import calendar_words, numerals
from dedup.policy.number_words import number_words
from dedup.policy.similarity import edit_distance
from dedup.policy.text import fold, unspaced_runs

# A word: letters and the marks drawn on them (Devanagari's and Thai's vowel signs: "दिन" is not
# "दीन"), with apostrophes and hyphens inside.
WORD = regex.compile(r"[\p{Alphabetic}\p{M}]+(?:['\u2019-][\p{Alphabetic}\p{M}]+)*")
_SENTENCE_END = re.compile(r"[.!?:;]['\")\]]*$")
# Weekdays and months in many languages: `calendar_words`. English months that are also common
# words count only when capitalised ("May", not "may"). Numbers written as words, English's and
# other languages': `number_words`.
_AMBIGUOUS_MONTHS = frozenset(("march", "may"))
# A symbol that carries a fact, which a normalised text drops with punctuation: an emoji, a
# check or a cross (Unicode's other symbols, flags' regional letters among them), a comparison
# or an operator (math symbols) and a currency ("✅" against "❌", "< 5 ms" against "> 5 ms",
# "5 $" against "5 €"). Modifier symbols (a skin tone, "^") and punctuation change no fact.
# Each is read with the characters drawn with it (a grapheme: a flag's two regional letters, an
# emoji's joined parts), less its skin tone and presentation selector.
SYMBOL = regex.compile(r"(?=[\p{So}\p{Sm}\p{Sc}])\X")
_SYMBOL_STYLE = regex.compile(r"[\p{Sk}\uFE0E\uFE0F]")


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
    "word": "a word",  # any other word (`changed_words`)
    "symbol": "a symbol",  # `changed_symbols`
}
FLAG_KINDS = tuple(FLAG_LABELS)
# A typo is one edit (an adjacent swap is one) in a word of this many letters or more, its first
# letter kept: "alway" for "always", "refershed" for "refreshed". Shorter words are other words
# one letter apart ("form" and "from", "cat" and "cut"), as are "unable" and "enable".
MIN_TYPO_WORD_CHARS = 6
# Past this many words changed on a side, no typo is looked for among them: the texts differ in
# words anyway, and pairing each with each would cost the square of their number.
MAX_TYPO_PAIRS = 200


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


def changed_symbols(a: str, b: str) -> WordFlag | None:
    """Whether two texts' symbols (`SYMBOL`) differ, in order and in number: two texts of the
    same words, which a normalised text cannot tell apart, may state opposite facts ("deploys
    allowed: ✅" against "deploys allowed: ❌"; "deploys ✅, rollbacks ❌" against "deploys ❌,
    rollbacks ✅", the same symbols swapped). The flag holds those one text has and the other
    lacks, or, where both hold the same ones, each text's symbols in order."""
    left, right = _symbols(a), _symbols(b)
    if left == right:
        return None
    only_left = tuple(dict.fromkeys(c for c in left if c not in right))
    only_right = tuple(dict.fromkeys(c for c in right if c not in left))
    if not (only_left or only_right):
        only_left, only_right = tuple(left), tuple(right)
    return WordFlag("symbol", only_left, only_right)


def _symbols(text: str) -> list[str]:
    """A text's symbols in text order (the width of a full-width one aside)."""
    return [_SYMBOL_STYLE.sub("", symbol) for symbol in SYMBOL.findall(fold(text))]


def is_typo(a: str, b: str) -> bool:
    """Whether one folded word is a typo of the other (MIN_TYPO_WORD_CHARS). A run of a script
    written without spaces is a sentence, not a word: a character changed in it is a word
    changed ("磁盘" and "硬盘", two kinds of disk)."""
    if a[:1] != b[:1] or max(len(a), len(b)) < MIN_TYPO_WORD_CHARS or abs(len(a) - len(b)) > 1:
        return False
    return edit_distance(a, b) == 1 and not unspaced_runs(a) and not unspaced_runs(b)


def changed_words(a: str, b: str) -> WordFlag | None:
    """The words of each text that the other lacks in any case, other than those
    `differing_words` flags by kind and typos of one of the other's (`is_typo`): a word
    rewritten ("dark" against "light", "owned" against "monitored"), added or left out. A
    capitalised word starting a sentence is one of them: it may be a name ("Grace recommended"
    against "Ada recommended") that `word_kinds` cannot tell from any other word there. None
    when the texts differ only in case, punctuation, spacing, numbers or typos."""
    words_a, words_b = _spellings(_unflagged(a)), _spellings(_unflagged(b))
    only_a = {f: w for f, w in words_a.items() if f not in words_b}
    only_b = {f: w for f, w in words_b.items() if f not in words_a}
    left = _changed(only_a, only_b, word_kinds(a))
    right = _changed(only_b, only_a, word_kinds(b))
    return WordFlag("word", left, right) if left or right else None


def _unflagged(text: str) -> str:
    """The text without what is flagged inside a word: the numerals of Chinese and Japanese
    and their weekdays, which stand in a sentence written without spaces, one "word" (a
    sentence with "四台" for "五台" differs in a number, not in a word as well)."""
    if text.isascii():
        return text
    for start, end in reversed(numerals.spans(text)):
        text = f"{text[:start]} {text[end:]}"
    return calendar_words.without_attached_weekdays(text)


def _spellings(text: str) -> dict[str, str]:
    """A text's words by their folded form, with their first spelling, in text order."""
    spellings: dict[str, str] = {}
    for word in WORD.findall(text):  # "Don\u2019t" is "Don't", "follow-up" is "follow up"
        for part in word.replace("\u2019", "'").split("-"):
            spellings.setdefault(fold(part), part)
    return spellings


def _changed(
    own: dict[str, str], other: dict[str, str], kinds: dict[str, tuple[str, str]]
) -> tuple[str, ...]:
    typos_sought = len(own) <= MAX_TYPO_PAIRS and len(other) <= MAX_TYPO_PAIRS
    return tuple(
        word
        for folded, word in own.items()
        if folded not in kinds and not (typos_sought and any(is_typo(folded, o) for o in other))
    )
