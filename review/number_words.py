"""Numbers written as words, which a diff flags when they differ ("drei" against "vier"), in the
languages of `review.calendar_words` that num2words spells (not hand-kept tables): each
language's cardinals to twenty, its tens, a hundred, a thousand and a million, and its ordinals
to ten where num2words has them. English's list stands as it was (`review.diff.NUMBER_WORDS`).

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

from review.calendar_words import LANGUAGES, telling

CARDINALS = (*range(21), *range(30, 100, 10), 100, 1000, 10**6)
ENGLISH_HOMOGRAPHS = frozenset(
    "cant cent doze fire firs lima null otto premier primer primo pump quart quarto quince "
    "seize sept sexton twee venti".split()
)
ORDINALS = range(1, 11)


@functools.cache
def number_words() -> frozenset[str]:
    """Every spelled language's number words, casefolded (English's not among them)."""
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
    return frozenset(words - ENGLISH_HOMOGRAPHS)


def _spelled(language: str) -> list[str]:
    spelled = [num2words(number, lang=language) for number in CARDINALS]
    with contextlib.suppress(NotImplementedError):  # a language num2words has no ordinals of
        spelled += [num2words(number, lang=language, to="ordinal") for number in ORDINALS]
    return spelled
