"""Characters that show nothing in a name: those a new name is given without (`visible`), and
the names that are blank to the eye (`shows_nothing`). Pure functions of the text: the one name
rule built on them is `dedup.validation`'s (`label_form`, `lookup_form`, `clean_place_name`)."""

from __future__ import annotations

import unicodedata

# Characters that show nothing in a name, taken out of a new one, so that "no\u200btes" is
# "notes" rather than a second wing that looks the same: Unicode's format characters (a soft
# hyphen, zero-width spaces, word joiners, a byte order mark, the bidirectional controls such as
# U+202E, which shows the text after it reversed, tags) and the characters that are letters or
# marks only by category (the Hangul fillers, the combining grapheme joiner, Khmer's inherent
# vowels). Kept: the joiners that scripts and emoji need (U+200C, U+200D), the variation
# selectors, which choose how an emoji is drawn, the format characters that are drawn (the
# prepended concatenation marks: Arabic's number signs, the end of ayah), and the tags after a
# black flag, which make a region's flag (England's, Scotland's).
_FILLERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")
_JOINERS = frozenset("\u200c\u200d")
_DRAWN = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2")
_DRAWN |= {"\U000110bd", "\U000110cd"}
_KEPT_FORMAT = _JOINERS | _DRAWN
_BLACK_FLAG, _TAGS = "\U0001f3f4", ("\U000e0020", "\U000e007f")


def visible(value: str) -> str:
    """The value without the characters that show nothing (above)."""
    kept: list[str] = []
    flag = False  # in the tags after a black flag
    for c in value:
        if _TAGS[0] <= c <= _TAGS[1]:
            if flag:
                kept.append(c)
            continue
        flag = c == _BLACK_FLAG
        if c in _FILLERS or (unicodedata.category(c) == "Cf" and c not in _KEPT_FORMAT):
            continue
        kept.append(c)
    return "".join(kept)


# Drawn as a blank cell, a space to the eye but not to Python (`str.isspace`): the Braille
# pattern blank, which made a wing that showed as nothing.
BLANKS = frozenset("\u2800")


def selector(c: str) -> bool:
    """A variation selector: the standardized ones (VS1 to VS16: U+FE0F draws an emoji), the
    ideographic ones (VS17 to VS256), Mongolian's free ones."""
    return (
        "\ufe00" <= c <= "\ufe0f"
        or "\U000e0100" <= c <= "\U000e01ef"
        or "\u180b" <= c <= "\u180d"
        or c == "\u180f"
    )


def shows_nothing(value: str) -> bool:
    """Whether a text is blank to the eye: nothing but spaces (the Braille blank too) and
    characters drawn as nothing on their own (those `visible` takes out, a joiner, a variation
    selector, which shape or choose how the character beside them is drawn). "" is blank."""
    return all(
        c.isspace()
        or c in BLANKS
        or c in _FILLERS
        or c in _JOINERS
        or selector(c)
        or (unicodedata.category(c) == "Cf" and c not in _DRAWN)
        for c in value
    )
