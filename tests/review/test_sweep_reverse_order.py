"""A sweep's reverse undoes its merges together, the newest decision first, whatever order its
applications took its proposals in, and reads the later decisions once for them all."""

import pytest

from dedup import services as write
from review.services import reverts
from review.services import sweeps as sweep_services
from tests.review.test_sweeps import legacy, palace, run_sweep, snapshot  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("tiers", [("exact", "normalized"), ("normalized", "exact")])
def test_a_run_applied_tier_by_tier_reverses_to_the_prior_state(palace, curator, tiers):  # noqa: F811
    """The second application merges into the drawer the first merged into, on a proposal of a
    lower id when the exact tier comes second: reverted by proposal, the run's own merges
    blocked each other (409)."""
    run = run_sweep()
    prior = snapshot()
    merged = 0
    for tier in tiers:
        merged += sweep_services.apply(run, threshold=0.9, tiers=[tier], actor=curator).merged
    assert merged >= 2
    reversed_ = sweep_services.reverse(run, actor=curator)
    assert reversed_.undone >= merged
    assert snapshot() == prior


def test_the_reverse_reads_the_later_decisions_once_for_every_merge(
    dedup_settings, curator, monkeypatch
):
    """One read of the decisions after the run's first merge to hold them, one to judge them
    again once held: a read per merge (three, with the revert's own) made the reverse of 400
    merges take 50 s."""
    room = write.room_get_or_create(wing="ops", room="runbooks")
    for i in range(8):
        text = f"Fact {i}: the backup of cluster {i * 7919} runs nightly for the ops team."
        legacy(room, text)
        legacy(room, text)
    run = run_sweep()
    assert sweep_services.apply(run, threshold=0.99, actor=curator).merged == 8
    reads = []
    batch_dependents = reverts._batch_dependents
    monkeypatch.setattr(reverts, "dependents", lambda entry: reads.append(entry) or [])
    monkeypatch.setattr(
        reverts,
        "_batch_dependents",
        lambda entries: reads.append(entries) or batch_dependents(entries),
    )
    sweep_services.reverse(run, actor=curator)
    assert len(reads) == 2
    assert all(isinstance(read, list) and len(read) == 8 for read in reads)
