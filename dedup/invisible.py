"""Characters that show nothing in a name: those a new name is given without (`visible`), the
spaces its ends are trimmed of (`trimmed`), and the names that are blank to the eye
(`shows_nothing`). Pure functions of the text: the one name rule built on them is
`dedup.validation`'s (`label_form`, `lookup_form`, `clean_place_name`)."""

from __future__ import annotations

import re
import unicodedata

import regex

# Characters that show nothing in a name, taken out of a new one, so that "no\u200btes" is
# "notes" rather than a second wing that looks the same: Unicode's format characters (a soft
# hyphen, zero-width spaces, word joiners, a byte order mark, the bidirectional controls such as
# U+202E, which shows the text after it reversed, tags) and the characters that are letters or
# marks only by category (the Hangul fillers, the combining grapheme joiner, Khmer's inherent
# vowels). Kept: the joiners that scripts and emoji need (U+200C, U+200D) and the variation
# selectors, which choose how an emoji is drawn, where they can change what is drawn (below),
# the format characters that are drawn (the prepended concatenation marks: Arabic's number
# signs, the end of ayah), and the tags after a black flag, which make a region's flag
# (England's, Scotland's).
_FILLERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")
_JOINERS = frozenset("\u200c\u200d")
_DRAWN = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2")
_DRAWN |= {"\U000110bd", "\U000110cd"}
_KEPT_FORMAT = _JOINERS | _DRAWN
_BLACK_FLAG, _TAGS = "\U0001f3f4", ("\U000e0020", "\U000e007f")

# Drawn as a blank cell, a space to the eye but not to Python (`str.isspace`): the Braille
# pattern blank, which made a wing that showed as nothing, or as "alpha" ("alpha\u2800").
BLANKS = frozenset("\u2800")
_ENDS = re.compile(r"^[\s\u2800]+|[\s\u2800]+$")

# Where a joiner or a variation selector can change nothing that is drawn, it is taken out, so
# that "alpha\u200d", "al\u200cpha" and "alpha\ufe0f" are "alpha". Latin, Greek and Cyrillic
# letters are neither joined nor formed into conjuncts, and no variation sequence starts with
# one (a ZWNJ between two Latin letters can keep a font from a ligature, "Auf\u200clage": a
# nuance given up, as "al\u200cpha" looked like "alpha"); no ASCII character is either, but
# the digits, # and *, which start keycaps (U+FE0F, then U+20E3), kept only there.
#
# Nor are the letters of Han, Hiragana, Katakana and Hangul (its syllables and its letters that
# do not conjoin; the conjoining jamo, which a joiner can keep from forming a syllable, are not
# plain): "東京\u200d" and "東京\ufe0f" are "東京". A variation selector after a Han ideograph
# can choose a glyph: the ideographic ones (VS17 to VS256, the Ideographic Variation Database's
# "葛\U000e0100") and VS1 to VS3 (the variants of compatibility ideographs). It is taken out
# all the same, a look-alike folded: the variant is the same character to a reader, and a font
# without it draws the ideograph as it is, one variant of it, so "葛\U000e0100" and "葛" look
# the same in one font or the other; a sequence no database registers ("東\U000e0100") changes
# nothing anywhere, and which are registered is not the rule's to know. Unicode folds them out
# of identifiers too (NFKC_Casefold drops every variation selector, IDNA refuses them), and NFC
# already gives a compatibility ideograph its unified character ("\ufa47" is "漢"). What is
# given up is the registered glyph in a name, as the ligature was. An emoji's selector after a
# CJK symbol ("㊗\ufe0f", drawn as an emoji) is kept: a symbol is no letter.
_PLAIN_SCRIPTS = frozenset(
    {"LATIN", "GREEK", "CYRILLIC", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HENTAIGANA"}
    | {"IDEOGRAPHIC"}  # Han's iteration and closing marks, letters: "々"
)
_PLAIN_NAMES = (  # the start of a plain letter's name where no word of it says its script
    "CJK UNIFIED IDEOGRAPH-",
    "CJK COMPATIBILITY IDEOGRAPH-",
    "HANGUL SYLLABLE ",
    "HANGUL LETTER ",
    "HALFWIDTH HANGUL LETTER ",
)
_SEQUENCE_STARTS = frozenset("0123456789#*")
KEYCAP = "\u20e3"
_EDGE, _PLAIN, _LETTER, _OTHER = range(4)


def selector(c: str) -> bool:
    """A variation selector: the standardized ones (VS1 to VS16: U+FE0F draws an emoji), the
    ideographic ones (VS17 to VS256), Mongolian's free ones."""
    return (
        "\ufe00" <= c <= "\ufe0f"
        or "\U000e0100" <= c <= "\U000e01ef"
        or "\u180b" <= c <= "\u180d"
        or c == "\u180f"
    )


def _unseen(c: str) -> bool:
    """Drawn as nothing on its own: a filler, a format character that is not drawn, a joiner,
    a variation selector."""
    return (
        c in _FILLERS
        or selector(c)
        or (unicodedata.category(c) == "Cf" and c not in _DRAWN)  # a joiner, a tag too
    )


def _plain(c: str) -> bool:
    """ASCII, or a letter of Latin, Greek, Cyrillic, Han, Hiragana, Katakana or Hangul (not a
    conjoining jamo); its Unicode name says which: "LATIN SMALL LETTER A", "FULLWIDTH LATIN
    CAPITAL LETTER A", "HIRAGANA LETTER A", "CJK UNIFIED IDEOGRAPH-6771", "HANGUL SYLLABLE GA"."""
    if c.isascii():
        return True
    if not unicodedata.category(c).startswith("L"):
        return False
    name = unicodedata.name(c, "")
    return name.startswith(_PLAIN_NAMES) or not _PLAIN_SCRIPTS.isdisjoint(name.split())


def _base(value: str, index: int) -> str | None:
    """The character a mark at `index` is drawn on: the first before it that is no mark."""
    while index >= 0 and unicodedata.category(value[index]).startswith("M"):
        index -= 1
    return value[index] if index >= 0 else None


def _side(c: str | None) -> int:
    if c is None or c.isspace() or c in BLANKS:
        return _EDGE
    if _plain(c):
        return _PLAIN
    return _LETTER if unicodedata.category(c).startswith("L") else _OTHER


def _joins(value: str, index: int) -> bool:
    """Whether the joiner at `index` can change what is drawn: beside a letter of a script
    that joins or forms conjuncts (Arabic and Persian, Devanagari and the other Indic scripts,
    a mark on such a letter: a virama), or between two characters of neither kind (an emoji
    ZWJ sequence: "👩\u200d💻"). Beside an end, a space, or a plain letter (`_plain`: Latin,
    Greek, Cyrillic, CJK) or ASCII on both sides, it shapes nothing: "alpha\u200d",
    "東\u200d京", "👍\u200d". Characters that show nothing beside it are looked past."""
    before, after = index - 1, index + 1
    while before >= 0 and _unseen(value[before]):
        before -= 1
    while after < len(value) and _unseen(value[after]):
        after += 1
    left = _side(_base(value, before) if before >= 0 else None)
    right = _side(value[after] if after < len(value) else None)  # a mark: other
    return _LETTER in (left, right) or left == right == _OTHER


def _selects(value: str, index: int) -> bool:
    """Whether the variation selector at `index` can change what is drawn: right after a
    character a variation sequence can start with (an emoji, a CJK symbol, a letter of
    Myanmar or Mongolian; a digit, # or * only in a keycap, "db-2\ufe0f" being "db-2" to the
    eye). At the start, after a space, a mark, another character that shows nothing, a plain
    letter (`_plain`; a Han ideograph's variant is folded, above) or other ASCII, it selects
    nothing to tell apart: "alpha\ufe0f", "東京\U000e0100", "\ufe0f" alone."""
    if index == 0:
        return False
    before = value[index - 1]
    if before in _SEQUENCE_STARTS:  # a keycap ("1\ufe0f\u20e3"); "1\ufe0f" alone looks like 1
        return value[index + 1 : index + 2] == KEYCAP
    if _unseen(before) or unicodedata.category(before).startswith("M"):
        return False
    return _side(before) in (_LETTER, _OTHER)


def _taken_out(c: str) -> bool:
    """A filler, or a format character neither a joiner nor drawn: out of any name, wherever it
    stands (a tag, after a black flag, is the caller's to keep)."""
    return c in _FILLERS or (unicodedata.category(c) == "Cf" and c not in _KEPT_FORMAT)


def visible(value: str) -> str:
    """The value without the characters that show nothing (above)."""
    kept: list[str] = []
    flag = False  # in the tags after a black flag
    for index, c in enumerate(value):
        if _TAGS[0] <= c <= _TAGS[1]:
            if flag:
                kept.append(c)
            continue
        flag = c == _BLACK_FLAG
        if _taken_out(c):
            continue
        if c in _JOINERS and not _joins(value, index):
            continue
        if selector(c) and not _selects(value, index):
            continue
        kept.append(c)
    return "".join(kept)


def trimmed(value: str) -> str:
    """The value without spaces at its ends, the Braille blank's too."""
    return _ENDS.sub("", value)


def shows_nothing(value: str) -> bool:
    """Whether a text is blank to the eye: nothing but spaces (the Braille blank too) and
    characters drawn as nothing on their own (those `visible` takes out, a joiner, a variation
    selector, which shape or choose how the character beside them is drawn). "" is blank."""
    return all(c.isspace() or c in BLANKS or _unseen(c) for c in value)


def hidden_characters(text: str, *, at_most: int = 5) -> list[str]:
    """The characters of a text that show nothing yet change what a reader sees or what is
    stored (a bidirectional control such as U+202E, which shows what follows it reversed; a
    zero-width space; a Hangul filler): each once, as `U+202E RIGHT-TO-LEFT OVERRIDE`, the first
    `at_most`, for a curator who would otherwise compare two texts that are not what they show.
    The joiners emoji and scripts need, and the format characters that are drawn, are not among
    them."""
    found: dict[str, None] = {}
    # The regex finds what may be taken out in C: a page of a million characters reads them all.
    for match in _MAY_BE_TAKEN_OUT.finditer(text):
        c = match.group()
        if _taken_out(c) and not _TAGS[0] <= c <= _TAGS[1]:  # tags: a region's flag's
            found.setdefault(c)
            if len(found) == at_most:
                break
    return [f"U+{ord(c):04X} {unicodedata.name(c, 'UNNAMED')}" for c in found]


# The characters `_taken_out` may take: the fillers and the format characters.
_MAY_BE_TAKEN_OUT = regex.compile(f"[\\p{{Cf}}{''.join(sorted(_FILLERS))}]")
