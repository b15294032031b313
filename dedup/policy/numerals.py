"""The numerals Chinese and Japanese write numbers with ("三月", March; "四个服务器", four
servers), for the diff's number warning (`merge_gates.differing_numbers`): which runs of them
are numbers, and their values.

Some numerals stand in common words too ("一直", always; "十分", very; "千万", by all means):
a run is a number where it could be nothing else, of two numerals or more ("二十", "五一")
other than such a word, or one numeral after "第" (the ordinals) or "初" (a lunar month's
days) or before a counter or a unit of time, money or measure ("三月", "四个", "五点", "三つ").
A word rewritten ("一直" as "始终") is no number changed.
"""

from __future__ import annotations

import re

DIGITS = {"\u3007": 0, "零": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5}
DIGITS |= {"六": 6, "七": 7, "八": 8, "九": 9}
# The financial forms, written where a figure must not be altered (cheques, contracts).
DIGITS |= {"壹": 1, "贰": 2, "貳": 2, "叁": 3, "參": 3, "肆": 4, "伍": 5, "陆": 6, "陸": 6}
DIGITS |= {"柒": 7, "捌": 8, "玖": 9}
UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
TEN_THOUSAND, HUNDRED_MILLION = ("万", "萬"), ("亿", "億")
NUMERALS = "".join([*DIGITS, *UNITS, *TEN_THOUSAND, *HUNDRED_MILLION])
_RUN = re.compile(f"[{NUMERALS}]+")
# What a lone numeral counts: Chinese counters and Japanese ones, and units of time, money and
# measure.
COUNTERS = frozenset(
    "个個台件次回遍年月日号號点點时時分秒天周週元円块塊角人名位本条條张張只隻种種倍岁歲歳"
    "度米里斤克层層楼樓页頁章节節行列步轮輪期届屆家所部辆輛架杯瓶份套组組趟成季代世寸尺升"
    "枚冊階番歩つ钟鐘"
)
BEFORE = frozenset("第初")
# A run of numerals longer than this is compared as written: each 亿 multiplies by 10**8, and
# six hundred of them made a number Python would not write out (an item page's 500).
VALUED_MAX = 32
# Common words of two numerals or with a counter that are no number.
WORDS = (
    "十分",
    "一点",
    "一點",
    "一番",
    "一部",
    "千万",
    "千萬",
    "万一",
    "萬一",
    "万万",
    "萬萬",
    "一一",
)


def numbers(text: str) -> list[str]:
    """The runs of numerals of a text that are numbers (the module's rule), as written."""
    return [text[start:end] for start, end in spans(text)]


def spans(text: str) -> list[tuple[int, int]]:
    """Where the runs of numerals that are numbers stand in a text (start, end)."""
    found = []
    for run in _RUN.finditer(text):
        start, end = run.span()
        if _in_a_word(text, start, end):
            continue
        before, after = text[start - 1 : start], text[end : end + 1]
        if end - start > 1 or before in BEFORE or (after and after in COUNTERS):
            found.append((start, end))
    return found


def _in_a_word(text: str, start: int, end: int) -> bool:
    """Whether the run is one of WORDS (or its numerals): unless a counter follows it ("十分钟",
    ten minutes; "千万元", ten million yuan), where it is a number after all."""
    for word in WORDS:
        after = start + len(word)
        if (
            after >= end
            and text.startswith(word, start)
            and text[after : after + 1] not in COUNTERS
        ):
            return True
    return False


def value(numeral: str) -> str:
    """The value of a run of numerals: digits alone read one by one (二〇二六, a year: 2026),
    else with their units, 万 and 亿 each multiplying what comes before them (三千零五: 3005;
    一亿零一万: 100,010,000; 一万亿: 10**12)."""
    if all(c in DIGITS for c in numeral):
        return "".join(str(DIGITS[c]) for c in numeral)
    if len(numeral) > VALUED_MAX:  # no number written so: compared as written
        return numeral
    done = ten_thousands = section = digit = 0
    for c in numeral:
        if c in DIGITS:
            digit = DIGITS[c]
        elif c in UNITS:
            section += (digit or 1) * UNITS[c]
            digit = 0
        elif c in TEN_THOUSAND:
            ten_thousands += ((section + digit) or 1) * 10**4
            section = digit = 0
        else:
            done = ((done + ten_thousands + section + digit) or 1) * 10**8
            ten_thousands = section = digit = 0
    return str(done + ten_thousands + section + digit)


def is_numeral(text: str) -> bool:
    """Whether a changed part of a diff is numerals alone (outlined as a digit is)."""
    return bool(text) and all(c in NUMERALS for c in text)
