"""Names that read as another's: the form two names are compared in (`reading_form`) and the
scripts a name's letters are written in (`letter_scripts`). Pure functions of the text, for the
rule a new login's name is held to (`dedup.user_names`): an audit row's actor is a name, and
"Carol" or "c\u0430rol" (a Cyrillic a) beside the curator "carol" read as hers."""

from __future__ import annotations

import unicodedata

from dedup.invisible import trimmed, visible

# Han, the kana and Hangul are written together (Japanese writes Han with the kana, Korean Han
# with Hangul): one script to this rule. A letter's Unicode name says its script in its first
# word ("LATIN SMALL LETTER A", "CYRILLIC SMALL LETTER A", "CJK UNIFIED IDEOGRAPH-6771").
_EAST_ASIAN = frozenset(
    {"CJK", "IDEOGRAPHIC", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL", "HENTAIGANA"}
)
# Letters of no one script: a modifier letter ("\u02bc", an apostrophe) goes with any.
_NO_SCRIPT = ("MODIFIER LETTER ",)


def reading_form(name: str) -> str:
    """A name as it reads: without what shows nothing (`visible`, `trimmed`), its compatibility
    characters folded (NFKC: a fullwidth "\uff43" is "c", a mathematical bold "\U0001d41c" is
    "c"), case folded (`casefold`: "Carol" is "carol", "STRASSE" is "stra\u00dfe"'s form).
    Again until nothing changes, as Unicode's NFKC_Casefold is."""
    form = name
    while (again := unicodedata.normalize("NFKC", trimmed(visible(form))).casefold()) != form:
        form = again
    return form


def letter_scripts(name: str) -> frozenset[str]:
    """The scripts of a name's letters (digits and punctuation have none), each named as Unicode
    names its letters ("LATIN", "CYRILLIC", "GREEK"; Han, the kana and Hangul are "CJK"), read
    in the compatibility form (a fullwidth Latin letter is Latin)."""
    scripts: set[str] = set()
    for character in unicodedata.normalize("NFKC", name):
        if not unicodedata.category(character).startswith("L"):
            continue
        letter = unicodedata.name(character, "")
        if not letter or letter.startswith(_NO_SCRIPT):
            continue
        script = letter.split()[0]
        scripts.add("CJK" if script in _EAST_ASIAN else script)
    return frozenset(scripts)
