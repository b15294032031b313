"""A run's summary (its tiers and what applying at each threshold would do) is counted by the
database in one query, and says what reading every proposal said."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dedup.policy.merge_gates import MERGE_TIERS, gates_pass
from review.models import Proposal
from review.selectors import sweeps as sweep_selectors
from tests.review.test_sweeps import palace, run_sweep  # noqa: F401

pytestmark = pytest.mark.django_db
THRESHOLDS = (0.5, 0.9, 0.95, 0.975, 1.0)


def read_one_by_one(run, thresholds):
    """The summary as it was worked out, every proposal read."""
    tiers, what_if = {}, {}
    every = run.proposals.values_list("tier", "score", "gates", "verdict", "older_drawer")
    for tier, *_ in every:
        tiers[tier] = tiers.get(tier, 0) + 1
    rows = [row[:4] for row in every if row[4] is not None]  # an application passes them over
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
    assert sum(found["if_applied_at"]["0.50"].values()) == len(proposals) - 1
