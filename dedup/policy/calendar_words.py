"""The names of weekdays and months a diff flags when they differ, in the languages written
with spaces that most teams write in: from the Unicode CLDR through Babel (the wide names, in
the forms used in a date and alone: Russian "марта" beside "март"), not hand-kept tables.

A name of several words ("tháng một") cannot be one flagged word and is left out, as are the
languages whose names are not words to `review.diff`'s word pattern (Hindi's vowel signs are
marks) or take particles written onto them (Korean), and those written without spaces: the
weekdays of Chinese, Japanese and Korean are found anywhere in a text by a pattern of their
own (`attached_weekdays`), and their months are numerals or digits and a month, flagged as
numbers (`dedup.policy.numerals`).
"""

from __future__ import annotations

import functools
import re

from babel import Locale

_LATIN = re.compile(r"[a-zà-ɏ]")
# Weekdays of the languages that write them onto other words (Chinese, Japanese; Korean with a
# particle on), found anywhere in a text. Not a frequency: "每周三次" (three times a week),
# "一个星期一次" (once a week).
_ATTACHED_WEEKDAYS = re.compile(
    "(?:(?<![个個])(?:星期|礼拜|禮拜)[一二三四五六日天]|[周週][一二三四五六日])(?![次回遍趟])"
    "|[月火水木金土日]曜日|[월화수목금토일]요일"
)
LANGUAGES = (
    "en de fr es it pt nl sv da nb fi pl cs sk sl hr sr bs ro hu el bg ru uk be lt lv et tr az "
    "id ms tl sw ca gl eu ga cy is sq mk ar fa he ur"
).split()


def attached_weekdays(text: str) -> list[str]:
    """The weekdays of Chinese, Japanese and Korean in a text, as written."""
    return _ATTACHED_WEEKDAYS.findall(text)


def without_attached_weekdays(text: str, blank: str = " ") -> str:
    """The text with each of its weekdays of Chinese, Japanese and Korean replaced by `blank`."""
    return _ATTACHED_WEEKDAYS.sub(blank, text)


@functools.cache
def weekdays() -> frozenset[str]:
    """Every language's weekdays, casefolded."""
    return _names("days")


@functools.cache
def months() -> frozenset[str]:
    """Every language's months, casefolded."""
    return _names("months")


def _names(calendar_part: str) -> frozenset[str]:
    names: set[str] = set()
    for language in LANGUAGES:
        by_context = getattr(Locale.parse(language), calendar_part)
        for context in ("format", "stand-alone"):
            names.update(
                folded
                for name in by_context[context]["wide"].values()
                if (folded := name.casefold()).isalpha() and (language == "en" or telling(folded))
            )
    return frozenset(names)


def telling(name: str) -> bool:
    """Whether another language's name tells a date in any text: a Latin one of three letters
    may be an English word ("mac" is Malay's March, "mai" Romanian's and French's May)."""
    return len(name) > 3 or (not name.isascii() and not _LATIN.search(name))
