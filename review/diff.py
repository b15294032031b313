"""Word- and character-level differences between two texts, for a curator to see at a glance
what a near duplicate changed, and whether a number, a date, a name, a weekday or a month is
among the changes. Pure functions of two strings (no Django), so the queue, the item page and a
sweep's sample cards show the same diff."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, replace

import regex

from dedup.policy import calendar_words, numerals
from dedup.policy.merge_gates import differing_numbers
from dedup.policy.text import fold, unspaced_runs
from dedup.policy.word_flags import WORD, only_in, word_kinds
from review import sequences

_TOKEN = re.compile(r"\s+|[^\s]+")
_GRAPHEME = regex.compile(r"\X")
# A "word" this long is a sentence of a script written without spaces (or a path, a URL): a
# compact diff shows its changed characters with CONTEXT_CHARACTERS either side, not all of it.
LONG_WORD = 16
CONTEXT_CHARACTERS = 6
# A word with more letters changed than this is another word, struck whole and written whole.
LETTERS_CHANGED = 2


@dataclass(frozen=True)
class Segment:
    # "equal", "delete" (only in the left text), "insert" (only in the right text), "case" (the
    # same words written in another case or width: "Ada" and "ADA"), or "gap" (equal text left
    # out of a compact diff).
    op: str
    text: str
    # The kind of word the change touches when it is worth a warning: "name", "weekday",
    # "month", "number word" (see `differing_words`); "" otherwise.
    flag: str = ""
    was: str = ""  # a "case" segment's words as the other text writes them

    @property
    def has_digit(self) -> bool:
        return any(c.isdigit() for c in self.text) or numerals.is_numeral(self.text)


def _flag_of(text: str, flagged: dict[str, tuple[str, str]]) -> str:
    """The kind of the first flagged word of a changed word: a weekday written onto it too
    ("월요일에"), unless the word is a sentence of a script written without spaces (LONG_WORD),
    whose every change it would mark (the warning above the texts names it)."""
    attached = calendar_words.attached_weekdays(text) if len(text) < LONG_WORD else []
    for word in [*WORD.findall(text), *attached]:
        if (folded := fold(word)) in flagged:
            return flagged[folded][0]
    return ""


def excerpt(text: str, other: str, width: int = 50) -> str:
    """A text cut to `width` characters for a list, around where it first differs (as written)
    from `other`: two texts alike in their first fifty characters show what tells them apart
    ("…at ninety percent on the database volume." under "Disk usage alerts fire at eighty…").
    From its beginning when that difference falls early enough to show; whole if it fits."""
    text = composed(text)
    if len(text) <= width:
        return text
    other = composed(other)
    pairs = enumerate(zip(text, other, strict=False))  # to the shorter's end
    first = next((i for i, (x, y) in pairs if x != y), min(len(text), len(other)))
    if first < width - width // 4 or first >= len(text):  # early, or no difference in it
        return text[: width - 1].rstrip() + "…"
    start = min(max(first - width // 3, 0), len(text) - (width - 2))
    # From the start of a word, if one starts soon enough to leave what comes before the
    # difference to read.
    if (space := text.find(" ", start, min(first, start + width // 6))) >= 0:
        start = space + 1
    end = start + width - 2
    return "…" + text[start:end].rstrip() + ("…" if end < len(text) else "")


def composed(text: str) -> str:
    """The text in NFC, as it is compared (`dedup.policy.normalize_text`): the same words typed
    decomposed (a Korean syllable as its letters, a Vietnamese vowel and its marks) show as the
    same, not every syllable struck out."""
    return unicodedata.normalize("NFC", text)


def _characters(text: str) -> list[str]:
    """A text's characters as a reader sees them (grapheme clusters): a letter with its marks is
    one, so a changed Thai tone mark or Arabic vowel shows with its letter, not alone and
    invisible."""
    return _GRAPHEME.findall(text)


Letters = list[tuple[str, list[str], list[str]]]  # (op, the old word's letters, the new word's)


def by_letter(old: str, new: str) -> Letters | None:
    """A word replaced by one other word, letter by letter (`_characters`): its parts, equal,
    replaced, deleted or inserted, when they have half their letters or more in common and at
    most LETTERS_CHANGED of them changed (a typo: "refreshed" and "refershed"); None for another
    word, shown whole ("eighty" and "ninety", not "nin[e]igh[ty]"; "مارس" and "أبريل", whose
    letters interleaved break the joined script). A sentence of a script written without spaces
    (or a word of LONG_WORD characters) is one "word": any number of its characters may change,
    each shown in place. One comparison for the test and the parts."""
    a, b = _characters(old), _characters(new)
    found = sequences.opcodes(a, b)
    if sequences.ratio(a, b, found) < 0.5:
        return None
    changed = sum(max(i2 - i1, j2 - j1) for op, i1, i2, j1, j2 in found if op != "equal")
    sentence = _long(old, new) or bool(unspaced_runs(old) or unspaced_runs(new))
    if changed > LETTERS_CHANGED and not sentence:
        return None
    return [(op, a[i1:i2], b[j1:j2]) for op, i1, i2, j1, j2 in found]


def _sides(letters: Letters) -> tuple[list[Segment], list[Segment]]:
    left, right = [], []
    for op, old, new in letters:
        if op == "equal":
            left.append(Segment("equal", "".join(old)))
            right.append(Segment("equal", "".join(new)))
            continue
        if old:
            left.append(Segment("delete", "".join(old)))
        if new:
            right.append(Segment("insert", "".join(new)))
    return left, right


def _flagged(segments: list[Segment], flag: str) -> list[Segment]:
    if not flag:
        return segments
    return [s if s.op == "equal" else replace(s, flag=flag) for s in segments]


def _aligned(words_a: list[str], words_b: list[str]) -> list[sequences.Opcode]:
    """The words aligned up to case and width (`fold`): a text written again in capitals is
    the same words, each shown as written, so a typo among them stands out (aligned as written,
    every word was removed and inserted again, and the typo was lost among them)."""
    return sequences.opcodes([fold(w) for w in words_a], [fold(w) for w in words_b])


def as_written(old: list[str], new: list[str], joined: str = "") -> list[tuple[str, str, str]]:
    """An aligned run (its words equal up to case and width, `_aligned`) in parts written alike
    ("equal") and written otherwise ("case"), each with its old and new text `joined`. A space
    between two words written otherwise is theirs, so "ADA PREFERS" is one part."""
    differs = [o != n for o, n in zip(old, new, strict=True)]
    for i in range(1, len(old) - 1):
        if old[i].isspace() and old[i] == new[i]:
            differs[i] = differs[i - 1] and differs[i + 1]
    parts: list[tuple[str, str, str]] = []
    start = 0
    for end in range(1, len(old) + 1):
        if end == len(old) or differs[end] != differs[start]:
            op = "case" if differs[start] else "equal"
            parts.append((op, joined.join(old[start:end]), joined.join(new[start:end])))
            start = end
    return parts


def _word_changes(a: str, b: str) -> Iterator[tuple[str, str, str, Letters | None]]:
    """Two composed texts compared word by word: each opcode's op, old and new text, and for a
    word replaced by one word, its letters (`by_letter`: None for another word). An equal run
    comes in parts written alike ("equal") and in another case or width ("case")."""
    words_a, words_b = _TOKEN.findall(a), _TOKEN.findall(b)
    for op, i1, i2, j1, j2 in _aligned(words_a, words_b):
        if op == "equal":
            for part in as_written(words_a[i1:i2], words_b[j1:j2]):
                yield *part, None
            continue
        old, new = "".join(words_a[i1:i2]), "".join(words_b[j1:j2])
        single = op == "replace" and i2 - i1 == j2 - j1 == 1
        yield op, old, new, by_letter(old, new) if single else None


def side_by_side(a: str, b: str) -> tuple[list[Segment], list[Segment]]:
    """Segments of the left (older) and right (newer) text. Words are compared first; a word
    replaced by one word is compared letter by letter, so a typo shows as one letter. A change
    touching a flagged word (see `differing_words`) carries its kind."""
    a, b = composed(a), composed(b)
    flags_a, flags_b = only_in(word_kinds(a), b), only_in(word_kinds(b), a)
    left: list[Segment] = []
    right: list[Segment] = []
    for op, old, new, letters in _word_changes(a, b):
        if op in ("equal", "case"):
            left.append(Segment(op, old, was=new if op == "case" else ""))
            right.append(Segment(op, new, was=old if op == "case" else ""))
        elif letters:
            chars_left, chars_right = _sides(letters)
            left += _flagged(chars_left, _flag_of(old, flags_a))
            right += _flagged(chars_right, _flag_of(new, flags_b))
        else:
            if old:
                left.append(Segment("delete", old, _flag_of(old, flags_a)))
            if new:
                right.append(Segment("insert", new, _flag_of(new, flags_b)))
    return left, right


def inline(a: str, b: str) -> list[Segment]:
    """`side_by_side` in one line: what `b` lacks of `a` (`delete`) beside what it adds
    (`insert`), word by word, and letter by letter within a word replaced by one word (so
    "always" against "alway" is one struck letter); the rest as `b` writes it, its words in
    another case than `a`'s marked ("case"). A cluster shows one such line per member, each
    member's own text."""
    segments: list[Segment] = []
    for op, old, new, letters in _word_changes(composed(a), composed(b)):
        parts = [(o, "".join(x), "".join(y)) for o, x, y in letters] if letters else []
        for part_op, part_old, part_new in parts or [(op, old, new)]:
            if part_op in ("equal", "case"):
                segments.append(
                    Segment(part_op, part_new, was=part_old if part_op == "case" else "")
                )
                continue
            if part_old:
                segments.append(Segment("delete", part_old))
            if part_new:
                segments.append(Segment("insert", part_new))
    return segments


def compact(a: str, b: str, *, context: int = 3, longest: int = 12) -> list[Segment]:
    """One line for a list: the changed words in place (deleted, then inserted) with `context`
    words either side, equal text between changes left out as a "gap", and a change longer
    than `longest` words cut short. Segments are words joined by one space (line breaks and
    runs of spaces are not worth a list's room): two paragraphs become a dozen words."""
    a, b = composed(a), composed(b)
    words_a, words_b = a.split(), b.split()
    flags_a, flags_b = only_in(word_kinds(a), b), only_in(word_kinds(b), a)
    # A changed word with digits is a number changed only where the texts' numbers differ: not
    # "9h46" against "9H46" (outlined "number differs" on the queue's row, where the item page
    # warned of nothing).
    numbers_a, numbers_b = (bool(only) for only in differing_numbers(a, b))
    opcodes = _aligned(words_a, words_b)
    segments: list[Segment] = []
    for index, (op, i1, i2, j1, j2) in enumerate(opcodes):
        if op == "equal":
            head, tail = index > 0, index < len(opcodes) - 1
            run = words_a[i1:i2], words_b[j1:j2]
            segments += _context(*run, context, longest, head=head, tail=tail)
            continue
        long_pair = i2 - i1 == j2 - j1 == 1 and _long(words_a[i1], words_b[j1])
        if op == "replace" and long_pair and (letters := by_letter(words_a[i1], words_b[j1])):
            flags = _flag_of(words_a[i1], flags_a), _flag_of(words_b[j1], flags_b)
            segments += _long_word_changes(letters, *flags, numbers=(numbers_a, numbers_b))
            continue
        old, new = _shortened(words_a[i1:i2], longest), _shortened(words_b[j1:j2], longest)
        if old:
            segments.append(_changed("delete", old, _flag_of(old, flags_a), numbers_a))
        if new:
            segments.append(_changed("insert", new, _flag_of(new, flags_b), numbers_b))
    return segments


def _changed(op: str, text: str, flag: str, numbers_differ: bool) -> Segment:
    """A changed piece of a compact diff, flagged a number where it holds one and its text's
    numbers differ from the other's (unless flagged as another kind of word)."""
    if not flag and numbers_differ and Segment(op, text).has_digit:
        flag = "number"
    return Segment(op, text, flag)


def _long(old: str, new: str) -> bool:
    return min(len(old), len(new)) >= LONG_WORD


def _long_word_changes(
    letters: Letters, flag_old: str, flag_new: str, *, numbers: tuple[bool, bool]
) -> list[Segment]:
    """One long word replaced by another (a sentence of Chinese, Japanese or Thai with one
    character changed): the changed characters in place, with CONTEXT_CHARACTERS either side."""
    segments: list[Segment] = []
    for index, (op, old, new) in enumerate(letters):
        if op == "equal":
            head, tail = index > 0, index < len(letters) - 1
            segments += _context(old, new, CONTEXT_CHARACTERS, head=head, tail=tail, joined="")
            continue
        if old:
            segments.append(_changed("delete", "".join(old), flag_old, numbers[0]))
        if new:
            segments.append(_changed("insert", "".join(new), flag_new, numbers[1]))
    return segments


def _shortened(words: list[str], longest: int) -> str:
    if len(words) <= longest:
        return " ".join(words)
    return " ".join(words[:longest]) + " …"


def _context(
    old: list[str],
    new: list[str],
    context: int,
    longest: int = 0,
    *,
    head: bool,
    tail: bool,
    joined: str = " ",
) -> list[Segment]:
    """An equal run in a compact diff, as the newer text writes it (`_written`): its first
    `context` words (or characters, `joined` by nothing) after a change (head), its last
    `context` before one (tail), and a gap for what is left out between. Texts with no change
    at all show their beginning."""
    if not (head or tail):
        longest = longest or len(new)
        cut = len(new) > longest
        shown = _written(old[:longest], new[:longest], joined)
        return _joined([*shown, Segment("equal", "…")] if cut else shown, joined)
    if len(new) <= context * (head + tail) + 1:
        return _written(old, new, joined)
    segments = _written(old[:context], new[:context], joined) if head else []
    segments.append(Segment("gap", "…"))
    if tail:
        segments += _written(old[-context:], new[-context:], joined)
    return segments


def _written(old: list[str], new: list[str], joined: str) -> list[Segment]:
    """Segments of an equal run as the newer text writes it, its words in another case or width
    than the older's marked ("case", `as_written`)."""
    return [
        Segment(op, new_text, was=old_text if op == "case" else "")
        for op, old_text, new_text in as_written(old, new, joined)
    ]


def _joined(segments: list[Segment], joined: str) -> list[Segment]:
    """Neighbouring equal segments as one."""
    merged: list[Segment] = []
    for segment in segments:
        if merged and segment.op == merged[-1].op == "equal":
            merged[-1] = Segment("equal", merged[-1].text + joined + segment.text)
        else:
            merged.append(segment)
    return merged
