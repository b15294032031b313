"""What applying a sweep did to each proposal it reached, and the sentence that explains the
result against the run's what-if table: every proposal at or above the threshold is counted
under exactly one outcome, so the numbers add up to the table's and those settled before it
(applied or discarded before, which the table leaves out); and `Applied`, what an apply
returns."""

from __future__ import annotations

import enum
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any


class Outcome(enum.StrEnum):
    LINKED = "linked"
    MERGED = "merged"
    DISTINCT = "distinct"  # judged not the same in the sample: recorded distinct, never linked
    ALREADY_LINKED = "already_linked"  # a link between the two existed: left to the queue
    ALREADY_DISTINCT = "already_distinct"  # a curator had said the two are not the same
    GONE = "gone"  # a side was deleted, superseded or merged away since the run
    APPLIED_BEFORE = "applied_before"  # linked, merged or recorded distinct by an earlier apply
    DISCARDED_BEFORE = "discarded_before"
    OTHER_TIER = "other_tier"  # a tier the curator left out
    DISCARDED = "discarded"  # below the threshold, discarded as asked


LABELS = {
    Outcome.LINKED: "linked",
    Outcome.MERGED: "merged",
    Outcome.DISTINCT: "judged distinct -> recorded distinct",
    Outcome.ALREADY_LINKED: "already linked",
    Outcome.ALREADY_DISTINCT: "already recorded distinct",
    Outcome.GONE: "a side deleted or merged away",
    Outcome.APPLIED_BEFORE: "applied before",
    Outcome.DISCARDED_BEFORE: "discarded before",
    Outcome.OTHER_TIER: "in a tier not chosen",
    Outcome.DISCARDED: "discarded",
}


@dataclass
class Tally:
    """The outcomes of one application: those at or above the threshold (what the what-if table
    counts) and those below it."""

    threshold: float
    reached: Counter[Outcome] = field(default_factory=Counter)
    below: Counter[Outcome] = field(default_factory=Counter)

    def add(self, outcome: Outcome, *, below: bool) -> None:
        (self.below if below else self.reached)[outcome] += 1

    def count(self, outcome: Outcome) -> int:
        return self.reached[outcome] + self.below[outcome]

    def explained(self) -> str:
        """E.g. "8 proposed at or above 0.95: 5 linked, 2 judged distinct -> recorded
        distinct, 1 already linked." and what happened below the threshold, if anything."""

        def parts(counter: Counter[Outcome]) -> str:
            return ", ".join(f"{counter[o]} {LABELS[o]}" for o in Outcome if counter[o])

        total = sum(self.reached.values())
        text = f"{total} proposed at or above {self.threshold:g}"
        text += f": {parts(self.reached)}." if total else "."
        if self.below:
            text += f" Below it: {parts(self.below)}."
        return text

    def record(self, *, batch: uuid.UUID, actor_label: str, at: str, **settings: Any) -> dict:
        """The outcome as stored on the run (`SweepRun.applications`) and shown on its page."""
        return {
            "batch": str(batch),
            "at": at,
            "by": actor_label,
            **settings,
            "threshold": self.threshold,
            "proposed": sum(self.reached.values()),
            "outcomes": {o.value: self.reached[o] for o in Outcome if self.reached[o]},
            "below": {o.value: self.below[o] for o in Outcome if self.below[o]},
            "explained": self.explained(),
        }


@dataclass(frozen=True)
class Applied:
    batch: uuid.UUID
    linked: int
    merged: int
    discarded: int
    distinct: int = 0  # judged not the same: recorded as distinct pairs instead
    outcome: dict = field(default_factory=dict)  # as stored on the run, with `explained`

    @property
    def explained(self) -> str:
        return str(self.outcome.get("explained", ""))


@dataclass(frozen=True)
class Reversed:
    """What a reverse undid: its links and merges, and the merges it could undo only in part
    (a merged-away drawer deleted since stays deleted), each with why."""

    undone: int
    not_restored: list[dict] = field(default_factory=list)

    @property
    def explained(self) -> str:
        """The part left, in words, for a console message or a command's output."""
        return "; ".join(
            f"proposal {item['proposal']}: {', '.join(item['not_restored'])}"
            for item in self.not_restored
        )
