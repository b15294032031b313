"""Reads of a sweep: its proposals, what applying it would do, and its measured precision."""

from __future__ import annotations

from django.db.models import QuerySet

from review.gates import MERGE_TIERS, gates_pass
from review.models import Proposal, SweepRun
from review.selectors.stats import similarity_band

WHAT_IF_THRESHOLDS = (0.9, 0.95, 0.98, 1.0)


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
    """Per tier: proposals, and what applying at each threshold would do. A proposal judged
    "not the same" in the sample is never linked: applying records it distinct (`distinct`)."""
    rows: dict[str, dict] = {}
    for tier, score, gates, verdict in run.proposals.values_list(
        "tier", "score", "gates", "verdict"
    ):
        row = rows.setdefault(tier, {"proposals": 0, "scores": []})
        row["proposals"] += 1
        row["scores"].append((score, gates_pass(gates), verdict == "wrong"))
    what_if = {}
    for threshold in WHAT_IF_THRESHOLDS:
        links = merges = distinct = 0
        for tier, row in rows.items():
            for score, passed, wrong in row["scores"]:
                if score < threshold:
                    continue
                if wrong:
                    distinct += 1
                elif tier in MERGE_TIERS and passed and not run.entities:
                    merges += 1
                else:
                    links += 1
        what_if[f"{threshold:.2f}"] = {"links": links, "merges": merges, "distinct": distinct}
    return {
        "tiers": {tier: row["proposals"] for tier, row in rows.items()},
        "if_applied_at": what_if,
    }
