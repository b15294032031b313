"""Two sequences compared for a diff (words, or a word's letters), in bounded time.

`difflib.SequenceMatcher` takes time growing with the square of a repetitive sequence's length:
two drawers of 600,000 characters of one ideograph, a character apart, held a web worker for
minutes on their item page, which any agent allowed to write could cause. Here only the part
between the common start and common end of two long sequences is compared, and that part is
shown replaced whole when either side of it is longer than COMPARED_MAX (a variant's few edits
are a short part).
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

COMPARED_MAX = 1000  # items: at worst some 0.1 s of SequenceMatcher
Opcode = tuple[str, int, int, int, int]


def opcodes(a: Sequence[str], b: Sequence[str]) -> list[Opcode]:
    """SequenceMatcher's opcodes (autojunk off) for `a` into `b`, bounded as the module says
    (sequences of COMPARED_MAX items or fewer are compared whole, as SequenceMatcher aligns
    them)."""
    n, m = len(a), len(b)
    if max(n, m) <= COMPARED_MAX:
        return list(SequenceMatcher(None, a, b, autojunk=False).get_opcodes())
    start = 0
    while start < min(n, m) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(n, m) - start and a[n - 1 - end] == b[m - 1 - end]:
        end += 1
    found: list[Opcode] = [("equal", 0, start, 0, start)] if start else []
    a_end, b_end = n - end, m - end
    if max(a_end, b_end) > start:
        if max(a_end, b_end) - start <= COMPARED_MAX:
            middle = SequenceMatcher(None, a[start:a_end], b[start:b_end], autojunk=False)
            found += [
                (op, i1 + start, i2 + start, j1 + start, j2 + start)
                for op, i1, i2, j1, j2 in middle.get_opcodes()
            ]
        else:
            op = "replace" if a_end > start < b_end else "delete" if a_end > start else "insert"
            found.append((op, start, a_end, start, b_end))
    if end:
        found.append(("equal", a_end, n, b_end, m))
    return found


def ratio(a: Sequence[str], b: Sequence[str], found: list[Opcode]) -> float:
    """SequenceMatcher's ratio of the opcodes found: twice the items in common over all."""
    total = len(a) + len(b)
    common = sum(i2 - i1 for op, i1, i2, _, _ in found if op == "equal")
    return 2 * common / total if total else 1.0
