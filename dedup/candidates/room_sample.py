"""A room's sample: the words of its newest drawers, which tell its common words, how many of its
drawers hold a group of words (`Sample.matches`), and which unseen words look like corruptions
of its common words (`Sample.corrupts_common`). Read and cached by `room_words.sample`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rapidfuzz import process
from rapidfuzz.distance import OSA

from dedup.candidates.drawers import STOP_WORDS

# The common words this long or longer tell a corruption of one (`Sample.corrupts_common`).
CORRUPTED_COMMON_CHARS = 5


@dataclass(frozen=True, slots=True)
class Sample:
    """Of the room's sampled drawers (the constants are `room_words`'): the common words, and
    how many drawers hold each word seen in at least SEEN_DRAWERS of them (common ones
    included); how many were sampled, how many current drawers the room holds, which sampled
    drawers hold each word in at least MASKED_DRAWERS of them, and in a room of
    COMMON_WORDS_LEFT_OUT drawers or more the words in one sampled drawer only (a drawer of the
    room holds them: `query_groups` need not ask)."""

    common: frozenset[str] = frozenset()
    seen: dict[str, int] = field(default_factory=dict)
    sampled: int = 0
    drawers: int = 0
    masks: dict[str, int] = field(default_factory=dict)
    once: frozenset[str] = frozenset()
    # Of the common words of CORRUPTED_COMMON_CHARS or more but stop words (`corrupts_common`):
    # the words by length, and their first and last CORRUPTED_COMMON_CHARS characters or more.
    long_common: dict[int, tuple[str, ...]] = field(
        init=False, default_factory=dict, repr=False, compare=False
    )
    common_pieces: frozenset[str] = field(
        init=False, default=frozenset(), repr=False, compare=False
    )

    def __post_init__(self) -> None:
        long = sorted(
            w for w in self.common if len(w) >= CORRUPTED_COMMON_CHARS and w not in STOP_WORDS
        )
        by_length: dict[int, tuple[str, ...]] = {}
        for word in long:
            by_length[len(word)] = (*by_length.get(len(word), ()), word)
        low = CORRUPTED_COMMON_CHARS
        pieces = {w[:i] for w in long for i in range(low, len(w))}
        pieces |= {w[-i:] for w in long for i in range(low, len(w))}
        object.__setattr__(self, "long_common", by_length)
        object.__setattr__(self, "common_pieces", frozenset(pieces))

    def corrupts_common(self, word: str) -> bool:
        """Whether an unseen word looks like a corruption of one of the room's common words of
        CORRUPTED_COMMON_CHARS or more (stop words aside):
        - a typo: one edit (OSA) from it, or two for a word of 8 characters or more, the two
          lengths within one of each other, and not the common word with characters added or
          taken at an end (a plural, an inflection: "reports" of "report" is a real word);
        - a split: its first or last CORRUPTED_COMMON_CHARS characters or more;
        - a join: it run together with a word the sample holds of 3 characters or more.
        A room's template words are its longest common words, and a corruption, weighted toward
        long words, lands on them most (bench/corruption.py). Set lookups and one rapidfuzz call
        on the common words of a length within one: a few microseconds a word, whatever its
        length."""
        if not self.long_common:
            return False
        if word in self.common_pieces:
            return True
        size = len(word)
        for length in self.long_common:
            longs = self.long_common[length]
            if size - length >= 3 and (
                (word[:length] in longs and word[length:] in self.seen)
                or (word[-length:] in longs and word[:-length] in self.seen)
            ):
                return True
        if size < CORRUPTED_COMMON_CHARS:
            return False
        near = [
            c for length in (size - 1, size, size + 1) for c in self.long_common.get(length, ())
        ]
        typos = process.extract(
            word, near, scorer=OSA.distance, score_cutoff=1 if size < 8 else 2, limit=None
        )
        return any(
            not (common.startswith(word) or word.startswith(common))
            and not (common.endswith(word) or word.endswith(common))
            for common, _, _ in typos
        )

    def matches(self, group: Sequence[str]) -> float:
        """The estimated number of the room's drawers holding every word of `group`: its share of
        the sample (at least what independent words would give; an unseen word counts as in one
        sampled drawer), times the room's size."""
        if not self.sampled:
            return 0.0
        share, mask = 1.0, -1
        for word in group:
            share *= self.seen.get(word, 1) / self.sampled
            mask &= self.masks.get(word, -1)
        if mask != -1:  # the words with masks: the sampled drawers holding them all
            masked = [w for w in group if w in self.masks]
            together = mask.bit_count() / self.sampled
            alone = 1.0
            for word in masked:
                alone *= self.seen[word] / self.sampled
            share = share / alone * max(together, alone)
        return share * self.drawers
