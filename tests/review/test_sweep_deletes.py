"""A drawer deleted or superseded while a sweep runs (issue: sweeps failed with `KeyError` or a
foreign key violation on a proposal's side). A batch is compared outside any transaction and
written in one: a pair whose drawer went meanwhile is skipped, the run finishes, and the
drawers a proposal refers to are held until it commits, so a deletion waits for it."""

import pytest
from django.db import connection

from dedup import services as write
from palace.models import Drawer
from review.models import Proposal, SweepPart, SweepRun
from review.services import sweep_parts, sweep_scan
from review.services import sweeps as sweep_services
from tests.review.lock_waits import in_thread, wait_until_blocked
from tests.review.sweep_data import legacy

FACTS = [
    "The staging database is refreshed from an anonymised production dump every Monday.",
    "Rotate the API tokens of departed agents within one working day of their leaving.",
]


@pytest.fixture
def copies(dedup_settings):
    """Each fact twice, as (older, newer) pairs."""
    room = write.room_get_or_create(wing="ops", room="runbooks")
    return [(legacy(room, fact), legacy(room, fact)) for fact in FACTS]


def pairs(run):
    return sorted(run.proposals.values_list("newer_drawer_id", "older_drawer_id"))


def after_compare(monkeypatch, change):
    """Run `change` once, after the first batch is compared and before it is written."""
    scan = sweep_scan.scan_batch
    changed = []

    def racing(run, part, rooms=None):
        scanned = scan(run, part, rooms)
        if not changed:
            changed.append(change())
        return scanned

    monkeypatch.setattr(sweep_scan, "scan_batch", racing)


CHANGES = {
    "deleted": lambda drawer: write.drawer_delete(drawer=drawer),
    "superseded": lambda drawer: write.drawer_supersede(drawer=drawer),
}


@pytest.mark.django_db
@pytest.mark.parametrize("change", CHANGES)
def test_a_pair_whose_drawer_went_after_the_compare_is_skipped(copies, monkeypatch, change):
    (gone, _), (older, newer) = copies
    after_compare(monkeypatch, lambda: CHANGES[change](gone))
    run = sweep_services.execute(sweep_services.start(threshold=0.9))
    assert run.status == SweepRun.Status.DONE
    assert pairs(run) == [(newer.pk, older.pk)]
    assert run.counts["skipped_gone"] == 1
    assert run.done == run.total


@pytest.mark.django_db
def test_a_part_with_a_skipped_pair_resumes_and_proposes_nothing_twice(copies, monkeypatch):
    (gone, _), (older, newer) = copies
    after_compare(monkeypatch, lambda: write.drawer_delete(drawer=gone))
    run = sweep_services.execute(sweep_services.start(threshold=0.9))
    monkeypatch.undo()
    SweepPart.objects.filter(run=run).update(status=SweepPart.Status.RUNNING, last_pk=0)
    sweep_services.execute(run)
    assert pairs(run) == [(newer.pk, older.pk)]


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres_only
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_a_delete_racing_the_write_of_a_batch_waits_for_its_proposals(copies, monkeypatch):
    """The deletion comes while the batch is being written, after its drawers were read: it
    waits for the batch to commit, then sets the proposal's side to null."""
    (older, newer), _ = copies
    gates = sweep_scan.drawer_gates
    errors: list[BaseException] = []
    blocked = []

    def racing(*args):
        if not blocked:
            deleter = in_thread(lambda: write.drawer_delete(drawer=older), errors)
            blocked.append((deleter, wait_until_blocked(deleter)))
        return gates(*args)

    monkeypatch.setattr(sweep_scan, "drawer_gates", racing)
    run = sweep_services.execute(sweep_services.start(threshold=0.9))
    (deleter, waited), *_ = blocked
    deleter.join()
    assert run.status == SweepRun.Status.DONE
    assert waited is True
    assert errors == []
    assert not Drawer.objects.filter(pk=older.pk).exists()
    assert (newer.pk, None) in pairs(run)


@pytest.mark.django_db
def test_a_batch_whose_drawers_all_went_is_done_and_writes_nothing(copies, monkeypatch):
    def delete_all():
        for drawer in Drawer.objects.all():
            write.drawer_delete(drawer=drawer)

    after_compare(monkeypatch, delete_all)
    run = sweep_services.start(threshold=0.9)
    part = sweep_parts.plan(run)[0]
    assert sweep_parts._step(part.pk).rows == 4
    assert Proposal.objects.count() == 0
