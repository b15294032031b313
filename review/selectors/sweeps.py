"""Reads of a sweep: its proposals, what applying it would do, and its measured precision."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from review.diff import Segment, WordFlag, differing_numbers, differing_words, side_by_side
from review.gates import MERGE_TIERS, gates_pass
from review.models import Proposal, SweepRun
from review.selectors.stats import similarity_band

WHAT_IF_THRESHOLDS = (0.9, 0.95, 0.98, 1.0)
SAMPLE_CARDS = 20


@dataclass
class SampleCard:
    """A sampled proposal to judge, with the diff of its two texts and their warnings (named
    like an item's, for the shared warning template)."""

    proposal: Proposal
    left: list[Segment]
    right: list[Segment]
    numbers_left: list[str]
    numbers_right: list[str]
    word_flags: list[WordFlag]


def sample_to_judge(run: SweepRun) -> list[SampleCard]:
    """The run's sampled proposals not judged yet (one query), each with its diff."""
    cards = []
    sample = run.proposals.filter(sampled=True, verdict="").order_by("tier", "score")
    for proposal in sample[:SAMPLE_CARDS]:
        older, newer = proposal.texts.get("older", ""), proposal.texts.get("newer", "")
        cards.append(
            SampleCard(
                proposal,
                *side_by_side(older, newer),
                *differing_numbers(older, newer),
                differing_words(older, newer),
            )
        )
    return cards


def precision(run: SweepRun) -> list[dict]:
    """From the judged sample: per tier and band, how many were judged and the share the same."""
    rows: dict[tuple[str, str], dict] = {}
    for tier, score, verdict, sampled in run.proposals.values_list(
        "tier", "score", "verdict", "sampled"
    ):
        row = rows.setdefault(
            (tier, similarity_band(score)), {"proposals": 0, "sampled": 0, "same": 0, "wrong": 0}
        )
        row["proposals"] += 1
        row["sampled"] += sampled
        if verdict:
            row[verdict] += 1
    return [
        {
            "tier": tier,
            "band": band_,
            **row,
            "precision": round(row["same"] / (row["same"] + row["wrong"]), 3)
            if row["same"] + row["wrong"]
            else None,
        }
        for (tier, band_), row in sorted(rows.items())
    ]


def proposals_for(run: SweepRun, *, tier: str = "", status: str = "") -> QuerySet[Proposal]:
    queryset = run.proposals.all()
    if tier:
        queryset = queryset.filter(tier=tier)
    if status:
        queryset = queryset.filter(status=status)
    return queryset


def summary(run: SweepRun) -> dict:
    """Per tier: proposals, and what applying at each threshold would do."""
    rows: dict[str, dict] = {}
    for tier, score, gates in run.proposals.values_list("tier", "score", "gates"):
        row = rows.setdefault(tier, {"proposals": 0, "scores": []})
        row["proposals"] += 1
        row["scores"].append((score, gates_pass(gates)))
    what_if = {}
    for threshold in WHAT_IF_THRESHOLDS:
        links = merges = 0
        for tier, row in rows.items():
            for score, passed in row["scores"]:
                if score >= threshold:
                    if tier in MERGE_TIERS and passed and not run.entities:
                        merges += 1
                    else:
                        links += 1
        what_if[f"{threshold:.2f}"] = {"links": links, "merges": merges}
    return {
        "tiers": {tier: row["proposals"] for tier, row in rows.items()},
        "if_applied_at": what_if,
    }
