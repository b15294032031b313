"""The verdict on a new drawer against an older one: exact, normalized, near or nothing."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from dedup.policy.similarity import EDIT_DISTANCE_LIMIT, similarity_of_normalized
from dedup.policy.text import content_hash, fingerprint_of_normalized, normalize_text

MIN_NEAR_CHARS = 12
DEFAULT_NEAR_THRESHOLD = 0.9
NEAR_THRESHOLD_RANGE = (0.5, 1.0)


class Verdict(enum.StrEnum):
    EXACT = "exact"
    NORMALIZED = "normalized"
    NEAR = "near"

    @property
    def strength(self) -> int:
        """Higher is stronger: exact beats normalized beats near."""
        return {Verdict.EXACT: 3, Verdict.NORMALIZED: 2, Verdict.NEAR: 1}[self]


def classify(
    same_hash: bool,
    same_fingerprint: bool,
    similarity: float,
    threshold: float,
    *,
    near_allowed: bool = True,
) -> Verdict | None:
    """The strongest signal decides; mere similarity counts only at or above the threshold.

    `near_allowed` is false for a new text under MIN_NEAR_CHARS normalised characters: one letter
    in a short phrase is another word (cat / car), not a typo.
    """
    if same_hash:
        return Verdict.EXACT
    if same_fingerprint:
        return Verdict.NORMALIZED
    if near_allowed and similarity >= threshold:
        return Verdict.NEAR
    return None


@dataclass(frozen=True, slots=True)
class Signals:
    """The evidence behind a verdict, stored on the link so the UI and the audit can say why."""

    same_hash: bool
    same_fingerprint: bool
    similarity: float
    threshold: float

    def as_dict(self) -> dict[str, bool | float]:
        return {
            "same_hash": self.same_hash,
            "same_fingerprint": self.same_fingerprint,
            "similarity": self.similarity,
            "threshold": self.threshold,
        }


@dataclass(frozen=True, slots=True)
class Assessment:
    verdict: Verdict | None
    signals: Signals


@dataclass(frozen=True, slots=True)
class Text:
    """What a comparison needs of one text; computed once per write, not once per pair."""

    content_hash: str
    normalized: str
    fingerprint: str | None

    @classmethod
    def of(cls, content: str) -> Text:
        """The hash, normal form and fingerprint of verbatim content."""
        normalized = normalize_text(content)
        return cls(content_hash(content), normalized, fingerprint_of_normalized(normalized))


def assess(new: Text, old: Text, *, threshold: float) -> Assessment:
    """Compare a new text with an older one and explain the verdict."""
    same_hash = new.content_hash == old.content_hash
    same_fingerprint = new.fingerprint is not None and new.fingerprint == old.fingerprint
    if same_hash or same_fingerprint:
        # The same bytes (or the same words) are as alike as texts get, even with no letter or
        # digit to compare: the link's evidence says 1.0, never the 0.0 of two empty forms.
        score = 1.0
    else:
        score = similarity_of_normalized(new.normalized, old.normalized)
    verdict = classify(
        same_hash,
        same_fingerprint,
        score,
        threshold,
        near_allowed=len(new.normalized) >= MIN_NEAR_CHARS,
    )
    return Assessment(verdict, Signals(same_hash, same_fingerprint, score, threshold))


def may_have_verdict(new: Text, old: Text, *, threshold: float) -> bool:
    """False only when `assess` surely finds no verdict, without comparing the texts: a write
    skips such candidates, most of those its lexical query returns.

    Edit similarity is at most shorter / longer (every character of the difference is an edit),
    computed as `similarity_of_normalized` computes it, so the bound holds at the threshold
    itself. Beyond EDIT_DISTANCE_LIMIT the score is a trigram Jaccard, which lengths do not
    bound: always compared.
    """
    if new.content_hash == old.content_hash:
        return True
    if new.fingerprint is not None and new.fingerprint == old.fingerprint:
        return True
    if len(new.normalized) < MIN_NEAR_CHARS:
        return False
    shorter, longer = sorted((len(new.normalized), len(old.normalized)))
    return longer > EDIT_DISTANCE_LIMIT or _lengths_allow(shorter, longer, threshold)


def near_length_range(length: int, threshold: float) -> tuple[int, int | None]:
    """The normalised lengths an older text may have and still be near a new one of `length`
    characters, by the bound `may_have_verdict` applies: from low to high (None: no bound), and
    any length over EDIT_DISTANCE_LIMIT, where the score is a trigram Jaccard that lengths do not
    bound."""
    if length > EDIT_DISTANCE_LIMIT:
        return 0, None
    if length < 1:  # an empty text is near nothing
        return 1, 0
    low = max(1, int(length * threshold) - 1)
    while not _lengths_allow(low, length, threshold):
        low += 1
    high = int(length / threshold) + 1
    while not _lengths_allow(length, high, threshold):
        high -= 1
    return low, None if high > EDIT_DISTANCE_LIMIT else high


def _lengths_allow(shorter: int, longer: int, threshold: float) -> bool:
    # The best similarity two texts of these lengths can reach, computed as
    # similarity_of_normalized computes a score, so the bound is exact at the threshold.
    return shorter > 0 and (longer - (longer - shorter)) / longer >= threshold
