"""Applying a sweep while drawers are deleted and links decided (issue: apply deadlocked with
them and answered 503 database_busy). Apply holds the drawers it may link, merge or record
distinct, by ascending id, before it locks any proposal, as a deletion does (the drawer, then
its proposals): nothing waits in a cycle. Real threads and connections, on PostgreSQL only."""

import contextlib
import threading
import time

import pytest
from django.db import connection

from dedup import services as write
from dedup.errors import DomainError, NotFound
from palace.models import AuditEntry, Drawer, DrawerLink
from review import services as decisions
from review.models import Proposal
from review.services import sweep_apply, sweep_reverse
from review.services import sweeps as sweep_services
from tests.races import race
from tests.review.lock_waits import in_thread, lock_waiters, wait_until_blocked
from tests.review.sweep_data import legacy

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres_only,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL"
    ),
]

FACTS = [
    "Refresh the staging database from an anonymised production dump every Monday.",
    "Backups run nightly at two in the morning and are kept for thirty days on the NAS.",
    "The deploy script must run database migrations before restarting the web workers.",
    "Rotate the API tokens of departed agents within one working day of their leaving.",
]


@pytest.fixture
def run(dedup_settings):
    """Each fact written twice (exact copies, merged by apply) and once with a typo (near)."""
    room = write.room_get_or_create(wing="ops", room="runbooks")
    for fact in FACTS:
        legacy(room, fact)
        legacy(room, fact)
        legacy(room, fact.replace("the", "teh", 1))
    return sweep_services.execute(sweep_services.start(threshold=0.9))


def test_a_delete_waiting_on_the_apply_lets_it_finish(run, monkeypatch, curator):
    """The deletion of the older side of the last exact pair comes once the apply is under way,
    as in production: it waits for the apply, which merges that pair, and then deletes."""
    later = run.proposals.filter(tier="exact").order_by("pk").last()
    errors: list[BaseException] = []
    blocked = delete_at_first_call(monkeypatch, "drawer_link", later.older_drawer_id, errors)
    sweep_services.apply(run, threshold=0.9, actor=curator)
    (deleter, waited), *_ = blocked
    deleter.join()
    later.refresh_from_db()
    assert waited is True
    assert errors == []
    assert later.status == Proposal.Status.MERGED
    assert later.older_drawer_id is None


def test_a_delete_waiting_on_the_reverse_lets_it_finish(run, monkeypatch, curator):
    """The same for the reverse: the kept drawer of the first merge is deleted once the reverse
    is under way (it goes newest first); the deletion waits, and every merge is undone."""
    sweep_services.apply(run, threshold=0.9, actor=curator)
    first = run.proposals.filter(status=Proposal.Status.MERGED).order_by("pk").first()
    errors: list[BaseException] = []
    blocked = delete_at_first_call(monkeypatch, "revert_held", first.older_drawer_id, errors)
    sweep_services.reverse(run, actor=curator)
    (deleter, waited), *_ = blocked
    deleter.join()
    first.refresh_from_db()
    assert waited is True
    assert errors == []
    assert first.status == Proposal.Status.PROPOSED
    assert first.older_drawer_id is None


def at_first_call(monkeypatch, name: str, work, errors: list) -> list:
    """At the first call of `sweep_apply.<name>` (the reverse's: `sweep_reverse.<name>`), start
    `work` in another thread and wait until it is blocked on a lock; then go on. Returns
    [(thread, blocked)]."""
    module = sweep_reverse if name in ("hold_decisions", "revert_held") else sweep_apply
    original = getattr(module, name)
    blocked: list = []

    def racing(*args, **kwargs):
        if not blocked:
            other = in_thread(work, errors)
            blocked.append((other, wait_until_blocked(other)))
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, racing)
    return blocked


def delete_at_first_call(monkeypatch, name: str, drawer_id: int, errors: list) -> list:
    """`at_first_call`, deleting the drawer."""
    gone = Drawer.objects.get(pk=drawer_id)
    return at_first_call(monkeypatch, name, lambda: write.drawer_delete(drawer=gone), errors)


def test_a_curators_revert_of_a_merge_waits_on_the_reverse(run, monkeypatch, curator):
    """A curator reverts one of the run's merges while the run is reversed: the revert waits on
    the decision's audit row, which the reverse holds first, and is then told it was reverted."""
    sweep_services.apply(run, threshold=0.9, actor=curator)
    entry = AuditEntry.objects.filter(action="review.merge").order_by("pk").first()
    errors: list[BaseException] = []
    answers: list = []

    def curator_revert():
        try:
            decisions.revert(decision=entry.pk, actor=curator)
        except DomainError as error:
            answers.append(error.code)

    blocked = at_first_call(monkeypatch, "revert_held", curator_revert, errors)
    sweep_services.reverse(run, actor=curator)
    (other, waited), *_ = blocked
    other.join()
    assert waited is True
    assert errors == []
    assert answers == ["already_reverted"]


def test_a_delete_during_the_reverse_does_not_deadlock(run, monkeypatch, curator):
    """A drawer of an applied pair is deleted once the reverse holds its run: the deletion sets
    its proposal's side and applied link to null (two updates of one row), so its commit checks
    the row's other keys, the run's among them. Held FOR UPDATE, the run made that check wait on
    the reverse, which waited on the deleted drawer: a deadlock (503)."""
    sweep_services.apply(run, threshold=0.9, actor=curator)
    linked = run.proposals.filter(status=Proposal.Status.LINKED).order_by("pk").first()
    errors: list[BaseException] = []
    blocked = delete_at_first_call(monkeypatch, "hold_decisions", linked.older_drawer_id, errors)
    sweep_services.reverse(run, actor=curator)
    (deleter, _), *_ = blocked
    deleter.join()
    assert errors == []


def deleting(run, curator):
    """Take the proposals' older sides away, the last proposal's first."""
    sides = run.proposals.values_list("older_drawer_id", flat=True).order_by("-pk")
    for drawer in Drawer.objects.filter(pk__in=list(sides)):
        with contextlib.suppress(NotFound):
            write.drawer_delete(drawer=drawer)


def merging(run, curator):
    """Merge the wing's open links, as a curator working through the queue."""
    for link in DrawerLink.objects.filter(status=DrawerLink.Status.OPEN).order_by("-pk"):
        with contextlib.suppress(DomainError):
            decisions.decide(item=f"d{link.pk}", action="merge", actor=curator)


@pytest.mark.parametrize("beside", [deleting, merging], ids=["deletes", "merges"])
def test_apply_beside_deletes_or_merges_in_the_wing(run, curator, other_curator, beside):
    """Like the soak that found it: one kind of work goes on in the wing while the run is
    applied; both finish."""
    room = write.room_get_or_create(wing="ops", room="runbooks")
    for fact in FACTS:  # open links between the run's drawers, for curators to merge
        write.drawer_write(room=room, content=fact.replace("the", "hte", 1))
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def applier():
        barrier.wait()
        sweep_services.apply(run, threshold=0.9, actor=curator)

    def other():
        barrier.wait()
        beside(run, other_curator)

    threads = [in_thread(applier, errors), in_thread(other, errors)]
    for thread in threads:
        thread.join()
    assert errors == []


def test_deletions_of_both_ends_of_applied_links_never_deadlock(run, curator):
    """Each deletion updates the proposal both ends name twice, so its commit checks the other
    end; each holds the other end FOR KEY SHARE in id order around its own, so the second waits
    for the first. (A guard: over HTTP it deadlocked about once in 2,000 requests; these rounds
    rarely hit that window.)"""
    sweep_services.apply(run, threshold=0.9, merge_tiers=(), actor=curator)
    linked = run.proposals.filter(status=Proposal.Status.LINKED)
    for older, newer in linked.values_list("older_drawer_id", "newer_drawer_id"):
        answers = race(*(delete_by_id(pk) for pk in (older, newer)))
        assert not Drawer.objects.filter(pk__in=[older, newer]).exists()
        assert all(answer is None or answer.code == "drawer_not_found" for answer in answers)


def delete_by_id(pk: int):
    return lambda: write.drawer_delete(drawer=Drawer(pk=pk))


def test_deletions_waiting_on_an_apply_hold_the_ends_of_its_new_links(run, monkeypatch, curator):
    """Both ends of a pair are deleted while the apply that links them holds them. Each deletion
    had read its drawer's links before it waited, so neither knew of the new link; each then
    updated the pair's proposal twice and checked, at commit, the other end, which the other
    deletion held: a deadlock (503 over HTTP). Each reads its links again once it holds its
    drawer, and the higher one holds the lower first. The deletions meet after their deletes,
    before their commits (or time out waiting, when one waits on the other's lock)."""
    pair = run.proposals.filter(tier="near").order_by("pk").first()
    committed, linked = threading.Event(), threading.Event()
    real_record, real_delete = sweep_apply._applied_record, Drawer.delete
    before_commits = threading.Barrier(2, timeout=2)

    def stalled_record(*args, **kwargs):
        linked.set()
        committed.wait(10)
        return real_record(*args, **kwargs)

    def delete_then_meet(drawer, *args, **kwargs):
        done = real_delete(drawer, *args, **kwargs)
        with contextlib.suppress(threading.BrokenBarrierError):
            before_commits.wait()
        return done

    monkeypatch.setattr(sweep_apply, "_applied_record", stalled_record)
    monkeypatch.setattr(Drawer, "delete", delete_then_meet)
    errors: list[BaseException] = []
    applier = in_thread(
        lambda: sweep_services.apply(run, threshold=0.9, merge_tiers=(), actor=curator), errors
    )
    assert linked.wait(10)
    deleters = [
        in_thread(lambda pk=pk: write.drawer_delete(drawer=Drawer(pk=pk)), errors)
        for pk in (pair.older_drawer_id, pair.newer_drawer_id)
    ]
    assert until(lambda: lock_waiters() == 2), "both deletions wait for the apply"
    committed.set()
    for thread in (applier, *deleters):
        thread.join()
    assert errors == []
    assert not Drawer.objects.filter(pk__in=[pair.older_drawer_id, pair.newer_drawer_id]).exists()


def until(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
