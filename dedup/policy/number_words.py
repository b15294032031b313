"""Numbers written as words, which a diff flags when they differ ("drei" against "vier"), in the
languages of `dedup.policy.calendar_words` that num2words spells (not hand-kept tables): each
language's cardinals to twenty, its tens, a hundred, a thousand and a million, and its ordinals
to ten where num2words has them; English's as they were, a list of its own (ENGLISH), which
has the words num2words does not give ("dozen", "once", "half").

A number of several words ("vingt et un") cannot be one flagged word: its single words are
flagged where they are numbers themselves. Another language's Latin word of three letters may
be an English one, or a word of its own language's every sentence (French "un", Turkish "bin"):
left out, as `calendar_words` leaves out such names. So are the longer ones that spell an
English word (ENGLISH_HOMOGRAPHS, read off the words num2words gives here: "fire" is Danish
four, "seize" French sixteen), which would flag a change of English words as a number's.
"""

from __future__ import annotations

import contextlib
import functools

from num2words import CONVERTER_CLASSES, num2words

from dedup.policy.calendar_words import LANGUAGES, telling

ENGLISH = frozenset(
    (
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy "
        "eighty ninety hundred thousand million billion dozen once twice thrice first third "
        "fourth fifth sixth seventh eighth ninth tenth half"
    ).split()
)
CARDINALS = (*range(21), *range(30, 100, 10), 100, 1000, 10**6)
ENGLISH_HOMOGRAPHS = frozenset(
    "cant cent doze fire firs lima null otto premier primer primo pump quart quarto quince "
    "seize sept sexton twee venti".split()
)
# Inflected forms (below) that are words of their own language's every page: "семью" (family),
# "сорока" (magpie), left out as ENGLISH_HOMOGRAPHS are.
INFLECTED_HOMOGRAPHS = frozenset(("семью", "сорока"))
ORDINALS = range(1, 11)
# The inflected forms num2words spells where its converter takes a case or a gender: Russian
# "две" (feminine), "трёх" (genitive), Ukrainian "дві", "двох"; the others' are their words as
# given (a Polish "dwie" or "trzech" is not flagged).
CYRILLIC_YO, CYRILLIC_IE = "\N{CYRILLIC SMALL LETTER IO}", "\N{CYRILLIC SMALL LETTER IE}"
RUSSIAN_CASES = "ngdaip"  # nominative, genitive, dative, accusative, instrumental, prepositional
UKRAINIAN_CASES = ("nominative", "genitive", "dative", "accusative", "instrumental", "locative")
INFLECTIONS: dict[str, list[dict[str, object]]] = {
    "ru": [{"case": case, "gender": gender} for case in RUSSIAN_CASES for gender in "mfn"],
    "uk": [{"case": case, "gender": g} for case in UKRAINIAN_CASES for g in ("m", "feminine")],
    "be": [{"gender": gender} for gender in "mfn"],
    "sr": [{"feminine": True}],
}


@functools.cache
def number_words() -> frozenset[str]:
    """Every language's number words, casefolded: ENGLISH, and those num2words spells."""
    words: set[str] = set()
    for language in LANGUAGES:
        if language == "en" or language not in CONVERTER_CLASSES:
            continue
        for spelled in _spelled(language):
            words.update(
                folded
                for word in spelled.replace("-", " ").split()
                if (folded := word.casefold()).isalpha() and telling(folded)
            )
    return ENGLISH | frozenset(words - ENGLISH_HOMOGRAPHS - INFLECTED_HOMOGRAPHS)


def _spelled(language: str) -> list[str]:
    spelled = [
        num2words(number, lang=language, **inflection)
        for inflection in [{}, *INFLECTIONS.get(language, [])]
        for number in CARDINALS
    ]
    if language in ("ru", "be"):  # YO is mostly written IE: "трёх", "трех"
        spelled += [
            word.replace(CYRILLIC_YO, CYRILLIC_IE) for word in spelled if CYRILLIC_YO in word
        ]
    with contextlib.suppress(NotImplementedError):  # a language num2words has no ordinals of
        spelled += [num2words(number, lang=language, to="ordinal") for number in ORDINALS]
    return spelled
