"""A run's summary (its tiers and what applying at each threshold would do) is counted by the
database in one query, and says what reading every proposal said."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from dedup.policy.merge_gates import MERGE_TIERS, gates_pass
from palace.models import Drawer
from review.models import Proposal
from review.selectors import sweeps as sweep_selectors
from tests.review.test_sweeps import palace, run_sweep  # noqa: F401

pytestmark = pytest.mark.django_db
THRESHOLDS = (0.5, 0.9, 0.95, 0.975, 1.0)


def read_one_by_one(run, thresholds):
    """The summary as it was worked out, every proposal read."""
    tiers, what_if = {}, {}
    every = run.proposals.select_related("newer_drawer", "older_drawer")
    for proposal in every:
        tiers[proposal.tier] = tiers.get(proposal.tier, 0) + 1
    # An application passes over those settled already and those with a side gone (deleted, or
    # superseded unless judged "not the same").
    rows = [
        (p.tier, p.score, p.gates, p.verdict)
        for p in every
        if p.status == "proposed"
        and p.newer_drawer is not None
        and p.older_drawer is not None
        and (p.verdict == "wrong" or not (p.newer_drawer.valid_to or p.older_drawer.valid_to))
    ]
    for threshold in thresholds:
        counts = {"links": 0, "merges": 0, "distinct": 0}
        for tier, score, gates, verdict in rows:
            if score < threshold:
                continue
            if verdict == "wrong":
                counts["distinct"] += 1
            elif tier in MERGE_TIERS and gates_pass(gates) and not run.entities:
                counts["merges"] += 1
            else:
                counts["links"] += 1
        label = f"{threshold:.2f}" if round(threshold, 2) == threshold else f"{threshold:.3f}"
        what_if[label] = counts
    return {"tiers": tiers, "if_applied_at": what_if}


def test_the_summary_counted_by_the_database_is_the_one_read_row_by_row(palace):  # noqa: F811
    run = run_sweep(threshold=0.5)
    proposals = list(run.proposals.order_by("pk"))
    assert len(proposals) >= 4
    Proposal.objects.filter(pk=proposals[0].pk).update(verdict="wrong")
    failing = {**proposals[1].gates, "numbers_differ": True}
    Proposal.objects.filter(pk=proposals[1].pk).update(gates=failing)
    Proposal.objects.filter(pk=proposals[2].pk).update(older_drawer=None)  # deleted since
    Proposal.objects.filter(pk=proposals[3].pk).update(status="linked")  # applied
    superseded = proposals[-1].newer_drawer
    Drawer.objects.filter(pk=superseded.pk).update(valid_to=timezone.now())  # merged away
    expected = read_one_by_one(run, THRESHOLDS)
    with CaptureQueriesContext(connection) as queries:
        found = sweep_selectors.summary(run, thresholds=THRESHOLDS)
    assert found == expected
    assert len(queries) == 1
    # Grouped by the gates' verdicts, not by the gates whole (each pair's signals, a group a
    # proposal): fewer rows than proposals.
    with connection.cursor() as cursor:
        cursor.execute(queries[0]["sql"])
        rows = cursor.fetchall()
    assert len(rows) < len(proposals) - 2
    left_out = {proposals[2].pk, proposals[3].pk} | {
        p.pk for p in proposals if superseded.pk in (p.newer_pk, p.older_pk)
    }
    assert sum(found["if_applied_at"]["0.50"].values()) == len(proposals) - len(left_out)
