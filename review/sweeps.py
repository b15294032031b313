"""Consolidation sweeps as the interfaces use them (views, API, commands): the writes live in
`review.services.sweeps`, the reads in `review.selectors.sweeps`, the tiers and gates in
`review.gates`. This module only gathers their public names under one roof."""

from review.gates import DRAWER_TIERS, ENTITY_TIERS, MERGE_TIERS, drawer_gates, gates_pass
from review.selectors.sweeps import precision, proposals_for, summary
from review.services.sweep_scan import Progress
from review.services.sweeps import Applied, apply, draw_sample, execute, judge, reverse, start

__all__ = [
    "DRAWER_TIERS",
    "ENTITY_TIERS",
    "MERGE_TIERS",
    "Applied",
    "Progress",
    "apply",
    "draw_sample",
    "drawer_gates",
    "execute",
    "gates_pass",
    "judge",
    "precision",
    "proposals_for",
    "reverse",
    "start",
    "summary",
]
