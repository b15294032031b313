"""Why the write path missed a variant's original (bench/recall.py, BENCH_DEBUG or the summary).

Re-runs the candidate query's logic in Python over every drawer of the room, unbounded, and names
the first reason that explains the miss:

- "no groups": the text got no lexical query (too short, or every word a stop word);
- "all broken": every word group holds a word the original lacks (a typo, a join, a split...);
- "capped": some group the original matches has more matches than the per-group bound, and the
  original is not among its newest (no unbroken group under the bound);
- "ranked out": a group found it, but more than the ranking cut ranked before it;
- "length band": it was found and ranked, but its length is outside the band asked for;
- "not linked": a candidate, yet not linked (the policy, or the cap on links per write).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class WordIndex:
    """Each drawer's set of normalised words, for unbounded group matches."""

    def __init__(self) -> None:
        self.words: dict[int, frozenset[str]] = {}

    def add(self, drawer_id: int, normalized: str) -> None:
        self.words[drawer_id] = frozenset(normalized.split(" "))

    def matches(self, group: Sequence[str]) -> list[int]:
        """Every drawer holding all of `group`'s words, newest first."""
        found = [i for i, words in self.words.items() if words.issuperset(group)]
        return sorted(found, reverse=True)


def groups_of(room_id: int, normalized: str, groups: int) -> list[list[str]]:
    """The groups the write of `normalized` asked, once stored: the words the room held besides
    its own drawer (as a sweep asks them)."""
    from dedup import candidates, policy

    words = policy.query_words_of_normalized(normalized)
    return candidates.query_groups(room_id, words, groups, holders=2)


def why_missed(
    index: WordIndex,
    word_groups: list[list[str]],
    original_id: int,
    in_band: bool,
    candidate_ids: Iterable[int],
) -> str:
    """The first reason (see the module's docstring) the original was not linked."""
    from dedup import candidates

    if original_id in set(candidate_ids):
        return "not linked"
    if not word_groups:
        return "no groups"
    original = index.words[original_id]
    intact = [g for g in word_groups if original.issuperset(g)]
    if not intact:
        return "all broken"
    if not any(original_id in index.matches(g)[: candidates.GROUP_MATCHES] for g in intact):
        return "capped"
    return "ranked out" if in_band else "length band"


def broken_by(word_groups: list[list[str]], original: frozenset[str]) -> list[str]:
    """The words of the groups the original lacks (what broke each group)."""
    return sorted({w for g in word_groups for w in g if w not in original})
