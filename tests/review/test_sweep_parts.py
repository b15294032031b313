"""A sweep in parts: the parts cover every row once, a crashed part resumes without proposing
twice, the run's progress is the sum of its parts', and workers in parallel find what one does."""

import threading
from collections import Counter

import pytest
from django.db import connection, connections

from dedup import services as write
from dedup.candidates import sweep_batch
from dedup.services import DedupConfig
from palace.models import Drawer, Entity
from review.models import Proposal, SweepPart, SweepRun
from review.services import sweep_parts, sweep_scan
from review.services import sweeps as sweep_services
from review.tasks import run_sweep

OFF = DedupConfig(enabled=False, near_threshold=0.9, entity_fuzzy=False)
FACTS = [
    "The staging database is refreshed from an anonymised production dump every Monday.",
    "Rotate the API tokens of departed agents within one working day of their leaving.",
    "The nightly backup of the billing cluster is copied to the cold storage bucket at two.",
]


def legacy(room, content, **extra):
    return write.drawer_write(
        room=room, content=content, mode=write.WriteMode.MINED, config=OFF, **extra
    ).drawer


def fill():
    """Three rooms and a diary, each holding copies and typos of the facts."""
    diary = write.room_get_or_create(wing="agents", room="diary")
    for name in ("runbooks", "billing", "people"):
        room = write.room_get_or_create(wing="ops", room=name)
        for fact in FACTS:
            legacy(room, fact)
            legacy(room, fact.upper())
            legacy(room, fact.replace("the", "teh", 1))
    for agent in ("alice", "bob"):
        for fact in FACTS:
            legacy(diary, fact, agent=agent)
            legacy(diary, fact, agent=agent)


def found(run=None):
    rows = Proposal.objects.filter(**({"run": run} if run else {}))
    return sorted(rows.values_list("newer_drawer", "older_drawer", "newer_entity", "tier"))


@pytest.fixture
def small_parts(monkeypatch):
    monkeypatch.setattr(sweep_parts, "PART_SIZE", 4)
    monkeypatch.setattr(sweep_scan, "BATCH", 2)


@pytest.mark.django_db
def test_parts_cover_every_drawer_exactly_once(dedup_settings, small_parts):
    fill()
    gone = legacy(write.room_get_or_create(wing="ops", room="runbooks"), "Deleted later.")
    write.drawer_supersede(drawer=gone)
    run = sweep_services.start(threshold=0.9)
    parts = sweep_parts.plan(run)
    covered = Counter(
        pk for part in parts for pk in sweep_scan.part_rows(run, part).values_list("pk", flat=True)
    )
    current = set(Drawer.objects.current().values_list("pk", flat=True))
    assert set(covered) == current
    assert max(covered.values()) == 1
    assert sum(part.total for part in parts) == len(current)
    assert max(part.total for part in parts) == 4
    assert {part.agent for part in parts} == {None, "alice", "bob"}


@pytest.mark.django_db
def test_planning_twice_adds_no_parts(dedup_settings, small_parts):
    fill()
    run = sweep_services.start(threshold=0.9)
    first = sweep_parts.plan(run)
    assert [p.pk for p in sweep_parts.plan(run)] == [p.pk for p in first]


@pytest.mark.django_db
def test_entity_sweep_is_planned_in_id_ranges(dedup_settings, small_parts):
    for name in ("Priya Shah", "Priya Sha", "Sam Carter", "Sam Cartr", "Ana", "Anna"):
        write.entity_resolve(name=name, kind="person", config=OFF)
    run = sweep_services.start(threshold=0.9, entities=True)
    parts = sweep_parts.plan(run)
    assert [part.total for part in parts] == [4, 2]
    run = sweep_services.execute(run)
    assert run.done == Entity.objects.count()
    assert run.proposals.count() == sum(run.counts.values())


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite opens no transaction")
@pytest.mark.django_db(transaction=True)
def test_an_entity_batch_s_lookups_share_one_transaction(dedup_settings):
    """On PostgreSQL the signature lookups run in a transaction with JIT off: a batch opens one
    for all its entities' lookups, not one for each (a BEGIN and a COMMIT each, at a million)."""
    for name in ("Priya Shah", "Priya Sha", "Sam Carter", "Sam Cartr"):
        write.entity_resolve(name=name, kind="person", config=OFF)
    run = sweep_services.start(threshold=0.9, entities=True)
    [part] = sweep_parts.plan(run)
    in_transaction: list[bool] = []
    jit_off: list[str] = []

    def watch(execute, sql, params, many, context):
        if "palace_entitysignature" in sql or "palace_entityalias" in sql:
            in_transaction.append(connection.in_atomic_block)
        if "jit" in sql:
            jit_off.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(watch):
        scanned = sweep_scan.scan_batch(run, part)
    assert scanned.rows == 4
    assert in_transaction  # the lookups and the aliases read
    assert all(in_transaction)  # the exact lookups and the aliases too, not only the signatures
    assert jit_off == ["SET LOCAL jit = off"]  # once for the batch, not once per lookup


@pytest.mark.django_db
def test_progress_adds_up_across_parts(dedup_settings, small_parts):
    fill()
    run = sweep_services.execute(sweep_services.start(threshold=0.9))
    parts = list(run.parts.all())
    assert run.status == SweepRun.Status.DONE
    assert {part.status for part in parts} == {SweepPart.Status.DONE}
    assert run.done == run.total == sum(part.done for part in parts)
    assert run.compared == sum(part.compared for part in parts)
    assert sum(run.counts.values()) == run.proposals.count()


@pytest.mark.django_db
def test_the_counts_add_up_while_the_run_is_under_way(dedup_settings, small_parts, monkeypatch):
    """After each batch the run's counts are the proposals committed so far (its page said "no
    proposal yet" until the last part was done)."""
    fill()
    seen = []
    refresh = sweep_parts.refresh_progress

    def refreshed(run_id, counts):
        refresh(run_id, counts)
        run = SweepRun.objects.get(pk=run_id)
        seen.append((sum(run.counts.values()), run.proposals.count(), run.status))

    monkeypatch.setattr(sweep_parts, "refresh_progress", refreshed)
    sweep_services.execute(sweep_services.start(threshold=0.9))
    assert any(status == SweepRun.Status.RUNNING and made > 0 for made, _, status in seen)
    assert all(made == proposed for made, proposed, _ in seen)


@pytest.mark.django_db
def test_the_task_runs_every_part(dedup_settings, small_parts):
    fill()
    run = sweep_services.start(threshold=0.9)
    run_sweep.enqueue(run.pk)  # the immediate backend runs the parts' tasks too
    run.refresh_from_db()
    assert run.status == SweepRun.Status.DONE
    assert run.parts.count() > 1
    assert run.done == run.total


@pytest.mark.django_db
def test_a_crashed_run_resumes_after_its_last_committed_batch(
    dedup_settings, small_parts, monkeypatch
):
    fill()
    clean = found(sweep_services.execute(sweep_services.start(threshold=0.9)))
    Proposal.objects.all().delete()
    propose = sweep_scan._propose_drawer_pairs
    calls = {"proposed": 0, "scanned": 0}

    def crash_on_third(*args):
        calls["proposed"] += 1
        if calls["proposed"] == 3:
            raise RuntimeError("worker killed")
        propose(*args)

    monkeypatch.setattr(sweep_scan, "_propose_drawer_pairs", crash_on_third)
    run = sweep_services.start(threshold=0.9)
    with pytest.raises(RuntimeError):
        sweep_services.execute(run)
    run.refresh_from_db()
    assert run.status == SweepRun.Status.FAILED
    assert run.parts.filter(status=SweepPart.Status.FAILED).count() == 1
    done_before = run.done
    assert 0 < done_before < run.total  # the batches before the crash were committed
    scan = sweep_batch.query_of  # once per drawer scanned

    def counted(*args, **kwargs):
        calls["scanned"] += 1
        return scan(*args, **kwargs)

    monkeypatch.setattr(sweep_batch, "query_of", counted)
    run = sweep_services.execute(run)
    assert run.status == SweepRun.Status.DONE
    assert calls["scanned"] == run.total - done_before  # nothing committed was done again
    assert found(run) == clean
    assert run.done == run.total


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres_only
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_two_workers_find_what_one_finds(dedup_settings, small_parts):
    fill()
    one = found(sweep_services.execute(sweep_services.start(threshold=0.9)))
    Proposal.objects.all().delete()
    run = sweep_services.start(threshold=0.9)
    parts = sweep_parts.plan(run)
    barrier = threading.Barrier(2)
    errors = []

    def worker(order):
        try:
            barrier.wait()
            for part in order:  # both workers try every part: they contend for each
                sweep_parts.run_part(part.pk)
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(order,)) for order in (parts, parts[::-1])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run.refresh_from_db()
    assert errors == []
    assert found(run) == one
    assert run.status == SweepRun.Status.DONE
    assert run.done == run.total


@pytest.mark.django_db
def test_the_command_resumes_a_failed_run(dedup_settings, small_parts, monkeypatch):
    from django.core.management import call_command

    fill()
    run = sweep_services.start(threshold=0.9)
    monkeypatch.setattr(sweep_scan, "_propose_drawer_pairs", _raise)
    with pytest.raises(RuntimeError):
        sweep_services.execute(run)
    monkeypatch.undo()
    call_command("dedup_sweep", resume=run.pk, no_progress=True)
    run.refresh_from_db()
    assert run.status == SweepRun.Status.DONE
    assert run.done == run.total


def _raise(*args):
    raise RuntimeError("worker killed")


@pytest.mark.django_db
def test_a_batch_another_worker_wrote_first_is_dropped(dedup_settings, small_parts, monkeypatch):
    fill()
    run = sweep_services.start(threshold=0.9)
    part = sweep_parts.plan(run)[0]
    scan = sweep_scan.scan_batch
    raced = []

    def racing(run, part, rooms=None):
        scanned = scan(run, part, rooms)
        if not raced:  # another worker does the same batch meanwhile
            raced.append(None)
            raced[0] = sweep_parts._step(part.pk).rows
        return scanned

    monkeypatch.setattr(sweep_scan, "scan_batch", racing)
    assert sweep_parts._step(part.pk).rows == -1
    part.refresh_from_db()
    assert raced == [2]
    assert part.done == 2


def busy(times: int, monkeypatch) -> list[int]:
    """`_step` refused as busy (SQLite's "database is locked", PostgreSQL's lock timeout) its
    first `times` calls, then itself; the pauses skipped. The tries, as they come."""
    from django.db import OperationalError

    step, tries = sweep_parts._step, []

    def refused(part_id, rooms=None):
        tries.append(part_id)
        if len(tries) <= times:
            raise OperationalError("database is locked")
        return step(part_id, rooms)

    monkeypatch.setattr(sweep_parts, "_step", refused)
    monkeypatch.setattr(sweep_parts.time, "sleep", lambda seconds: None)
    return tries


@pytest.mark.django_db
def test_a_batch_the_database_was_busy_for_is_tried_again(dedup_settings, small_parts, monkeypatch):
    """CASTELLAN_LOCK_TIMEOUT bounds a worker's lock waits too: a busy moment (behind an apply,
    an import) must not fail the run (the review)."""
    fill()
    clean = found(sweep_services.execute(sweep_services.start(threshold=0.9)))
    Proposal.objects.all().delete()
    busy(sweep_parts.BUSY_RETRIES, monkeypatch)
    run = sweep_services.execute(sweep_services.start(threshold=0.9))
    assert run.status == SweepRun.Status.DONE
    assert found(run) == clean


@pytest.mark.django_db
def test_a_batch_busy_past_its_tries_fails_the_run(dedup_settings, small_parts, monkeypatch):
    fill()
    tries = busy(sweep_parts.BUSY_RETRIES + 1, monkeypatch)
    run = sweep_services.start(threshold=0.9)
    with pytest.raises(Exception, match="database is locked"):
        sweep_services.execute(run)
    assert len(tries) == sweep_parts.BUSY_RETRIES + 1
    assert SweepRun.objects.get(pk=run.pk).status == SweepRun.Status.FAILED


@pytest.mark.django_db
def test_another_failure_is_not_tried_again(dedup_settings, small_parts, monkeypatch):
    fill()
    monkeypatch.setattr(sweep_scan, "_propose_drawer_pairs", _raise)
    tries = busy(0, monkeypatch)
    with pytest.raises(RuntimeError):
        sweep_services.execute(sweep_services.start(threshold=0.9))
    assert len(tries) == 1


@pytest.mark.django_db
def test_a_late_batch_adds_nothing_to_a_finished_runs_counts(dedup_settings, small_parts):
    """Another worker's batch on the same part, its refresh after the run was finished: the
    run's counts are the parts' sum already."""
    fill()
    run = sweep_services.execute(sweep_services.start(threshold=0.9))
    counts = dict(run.counts)
    sweep_parts.refresh_progress(run.pk, counts)
    run.refresh_from_db()
    assert run.counts == counts
