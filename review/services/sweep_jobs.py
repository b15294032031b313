"""Apply and Reverse as background jobs: a request checks what it can, records the job
(`SweepJob`) and queues its task, and answers at once; a worker (`review.tasks.run_sweep_job`)
calls the one write path, `sweep_apply.apply` or `sweep_reverse.reverse`, as the user who asked.
At thousands of merges an apply takes seconds (11 s for 2,158), past a proxy's read timeout.

The commands (`sweep_apply`, `sweep_reverse`) call the services in their own process instead."""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict
from typing import Any, cast

from django.db import DatabaseError, IntegrityError, connection, transaction
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from dedup.database import database_failure
from dedup.errors import Conflict, DomainError
from dedup.policy.merge_gates import MERGE_TIERS
from palace.models import DECIDE_PERMISSION
from review.models import UNFINISHED_JOBS, SweepJob, SweepRun
from review.selectors.sweeps import applied_since_last_reverse
from review.services.sweep_apply import apply, apply_check
from review.services.sweep_locks import worker_gone, worker_lock
from review.services.sweep_parts import BUSY_RETRIES
from review.services.sweep_reverse import NOT_APPLIED, reverse

logger = logging.getLogger("castellan.sweeps")

# Queues a job's task (`review.tasks.run_sweep_job.enqueue`, given by the caller: the tasks
# import these services) and returns what the queue returned (its `id` is kept on the job).
Queue = Callable[[int], Any]


def apply_queue(
    run: SweepRun,
    *,
    threshold: float,
    tiers: Iterable[str] | None = None,
    merge_tiers: Iterable[str] = MERGE_TIERS,
    discard_below: bool = False,
    actor: Any = None,
    queue: Queue,
) -> SweepJob:
    """Queue an apply of the run with these options, refused up front as `apply` would refuse it
    where that can be known without applying (`apply_check`: `run_not_done`, a bad threshold or
    tier, `nothing_to_apply`), and while another apply or reverse of the run is queued or
    running (`application_under_way`)."""
    under_way_refused(run)
    tiers = None if tiers is None else list(dict.fromkeys(tiers))  # each once, in order given
    merge_tiers = sorted(set(merge_tiers))
    apply_check(run, threshold=threshold, tiers=tiers, discard_below=discard_below)
    options = {
        "threshold": threshold,
        "tiers": tiers,
        "merge_tiers": merge_tiers,
        "discard_below": discard_below,
    }
    return _queued(run, SweepJob.Kind.APPLY, options, actor, queue)


def reverse_queue(run: SweepRun, *, actor: Any = None, queue: Queue) -> SweepJob:
    """Queue a reverse of the run: refused while another apply or reverse of it is queued or
    running (`application_under_way`), and when nothing of it is applied (`run_not_applied`)."""
    under_way_refused(run)
    if not applied_since_last_reverse(run).exists():
        raise Conflict(NOT_APPLIED, code="run_not_applied")
    return _queued(run, SweepJob.Kind.REVERSE, {}, actor, queue)


def under_way_refused(run: SweepRun) -> None:
    """Refuse (`application_under_way`, naming the job) while a job of the run is unfinished. A
    job marked running whose worker stopped (`worker_gone`) is marked failed instead: its
    changes rolled back with the worker's transaction, so nothing of it was applied."""
    stopped_settled(run)
    job = SweepJob.objects.filter(run=run, status__in=UNFINISHED_JOBS).first()
    if job is not None:
        raise Conflict(
            f"Sweep {run.pk}: {'an' if job.kind == SweepJob.Kind.APPLY else 'a'} {job.kind} is "
            f"{job.status} (job {job.pk}); wait for its "
            "outcome on the run's page, then try again.",
            code="application_under_way",
            details={"run": run.pk, "job": job.pk},
        )


def _queued(
    run: SweepRun, kind: SweepJob.Kind, options: dict, actor: Any, queue: Queue
) -> SweepJob:
    """Record the job and queue its task in one transaction (the database backend's task row
    commits with the job, or neither does). Of two sent at once, the database keeps one
    (`one_unfinished_job_per_run`) and the other is refused."""
    user = actor if getattr(actor, "is_authenticated", False) else None
    if user is not None:  # kept if the account is deleted while the job waits (`requested_by`)
        options = {**options, "asked_by": user.get_username()}
    try:
        with transaction.atomic():
            job = SweepJob.objects.create(run=run, kind=kind, options=options, requested_by=user)
            task = queue(job.pk)
            SweepJob.objects.filter(pk=job.pk).update(task_id=str(getattr(task, "id", "")))
    except IntegrityError:
        under_way_refused(run)
        raise
    job.refresh_from_db()  # a queue that runs its tasks at once (tests) has done it already
    return job


# Why a job nothing will finish failed (its changes, if any, rolled back with its worker).
TASK_ENDED = (
    "Its task ended before a worker took the job (the database unreachable for a moment, or the "
    "worker stopped as it began)."
)
WORKER_STOPPED = "The worker doing it stopped before it finished (killed, or its machine gone)."


@contextlib.contextmanager
def _worker_holding(job_id: int) -> Iterator[None]:
    """While a worker does a job, it holds a session lock of the job's (PostgreSQL), which its
    connection releases if it is killed: how a request tells a job still running from one whose
    worker stopped. Taken before the job is marked running, so a running job's lock is free
    only once its worker is gone."""
    if connection.vendor != "postgresql":
        yield
        return
    key = worker_lock(job_id)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [key])
    try:
        yield
    finally:
        with contextlib.suppress(DatabaseError), connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])  # a lost connection: gone


def job_cancel(run: SweepRun, *, actor: Any = None) -> SweepJob:
    """Cancel the run's Apply or Reverse while it waits for a worker: marked failed
    (`cancelled`), so the worker that takes its task does nothing (`_claimed`), and the run takes
    another. One a worker is doing is refused (`job_running`: all of it or none commits, so wait
    for its outcome), as is a run with none waiting (`no_job_waiting`)."""
    stopped_settled(run)
    with transaction.atomic():
        job = (
            SweepJob.objects.select_for_update().filter(run=run, status__in=UNFINISHED_JOBS).first()
        )
        if job is None:
            raise Conflict(
                f"Sweep {run.pk} has no Apply or Reverse waiting.", code="no_job_waiting"
            )
        if job.status == SweepJob.Status.RUNNING:
            raise Conflict(
                f"Sweep {run.pk}: the {job.kind} (job {job.pk}) is being done by a worker, all of "
                "it or none: wait for its outcome, then reverse it if need be.",
                code="job_running",
                details={"run": run.pk, "job": job.pk},
            )
        who = getattr(actor, "get_username", lambda: "")() or "someone"
        logger.info("sweep job %s (%s of sweep %s) cancelled by %s", job.pk, job.kind, run.pk, who)
        return _failed(job, "cancelled", f"Cancelled by {who} before a worker took it.")


def stopped_settled(run: SweepRun) -> None:
    """Mark the run's unfinished job failed if nothing will finish it: its worker stopped
    (`worker_gone`), or its task ended before it claimed the job (the database gone for a
    moment, the worker killed as it began). What the next Apply or Reverse does first, and what a
    page or client following the job sees, rather than a job under way for good; nothing of it
    was applied (its changes roll back with the worker's transaction)."""
    for job in SweepJob.objects.filter(run=run, status__in=UNFINISHED_JOBS):
        if worker_gone(job):
            _settled_failed(job.pk, worker_gone, "worker_stopped", WORKER_STOPPED)
        elif _task_ended(job):
            _settled_failed(job.pk, _task_ended, "worker_stopped", TASK_ENDED)


def _settled_failed(
    job_id: int, still: Callable[[SweepJob], bool], code: str, message: str
) -> None:
    """Mark the job failed if, held now (its row FOR UPDATE), it is still unfinished and `still`
    holds: a worker that finished it meanwhile has committed `done`, which is kept."""
    with transaction.atomic():
        job = SweepJob.objects.select_for_update().filter(pk=job_id).first()
        if job is not None and job.unfinished and still(job):
            logger.warning("sweep job %s: %s", job.pk, message)
            _failed(job, code, message)


def _task_ended(job: SweepJob) -> bool:
    """The job is queued but its task (in the database's queue) ended without claiming it."""
    if job.status != SweepJob.Status.QUEUED:
        return False
    try:
        task_id = uuid.UUID(job.task_id)
    except ValueError:  # no task of the database's queue (a backend that ran it at once)
        return False
    ended = (TaskResultStatus.FAILED, TaskResultStatus.SUCCESSFUL)
    return DBTaskResult.objects.filter(id=task_id, status__in=ended).exists()


def job_run(job_id: int) -> SweepJob:
    """`_job_run`, holding the job's worker lock (`_worker_holding`)."""
    with _worker_holding(job_id):
        return _job_run(job_id)


def _job_run(job_id: int) -> SweepJob:
    """Do a queued job, once: its service's changes and the job's outcome commit together, so
    a job is done with all of its changes or failed with none. A refusal (e.g. `nothing_to_apply`
    when every pair was linked since it was queued, `revert_blocked`) or a crash fails it with
    its code and message; a busy database is waited for and tried again, as a sweep's batch
    is. A job taken already (a task run twice) is left as it is."""
    job = _claimed(job_id)
    if job is None:
        return SweepJob.objects.get(pk=job_id)
    for attempt in range(1, BUSY_RETRIES + 1):
        try:
            with transaction.atomic():
                result = _service_called(job)
                finished = timezone.now()
                done = SweepJob.objects.filter(pk=job.pk, status=SweepJob.Status.RUNNING).update(
                    result=result, status=SweepJob.Status.DONE, finished_at=finished
                )
                if not done:  # marked failed meanwhile (taken for stopped): undo it all
                    raise _SettledMeanwhile
            job.result, job.status, job.finished_at = result, SweepJob.Status.DONE, finished
            return job
        except _SettledMeanwhile:
            job.refresh_from_db()
            return job
        except DomainError as refused:
            return _failed(job, refused.code, refused.message, refused.details)
        except Exception as error:
            busy = database_failure(error)
            if busy is not None and busy[0] == "database_busy" and attempt < BUSY_RETRIES:
                logger.warning("sweep job %s: %s; trying again, try %s", job.pk, error, attempt)
                time.sleep(busy[2] * attempt)
                continue
            logger.exception("sweep job %s failed", job.pk)
            _failed(job, busy[0] if busy else "server_error", f"{type(error).__name__}: {error}")
            raise
    raise AssertionError("unreachable: the last try returns or raises")


def _claimed(job_id: int) -> SweepJob | None:
    """The job, marked running, if it is still queued."""
    with transaction.atomic():
        job = SweepJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status != SweepJob.Status.QUEUED:
            return None
        job.status = SweepJob.Status.RUNNING
        job.started_at = timezone.now()
        job.save(update_fields=["status", "started_at"])
    return job


def _service_called(job: SweepJob) -> dict:
    """Call the job's service, as the user who asked, if they still may: one whose curator's
    right was taken (or account closed) while the job waited fails it (`permission_denied`)
    rather than have it applied in their name. Its answer as the API gives it."""
    asker, asked_by = job.requested_by, job.options.get("asked_by")
    deleted = asker is None and asked_by is not None  # the foreign key set null
    if deleted or (
        asker is not None and not (asker.is_active and asker.has_perm(DECIDE_PERMISSION))
    ):
        # A job queued before jobs kept the asker's name names them by their account.
        name = asked_by or cast(Any, asker).get_username()
        raise DomainError(
            f"{name} may no longer decide, so the job they asked for was not done; a "
            "curator can ask for it again.",
            code="permission_denied",
        )
    run = SweepRun.objects.get(pk=job.run_id)
    if job.kind == SweepJob.Kind.REVERSE:
        return asdict(reverse(run, actor=job.requested_by))
    options = job.options
    applied = apply(
        run,
        threshold=options["threshold"],
        tiers=options["tiers"],
        merge_tiers=options["merge_tiers"],
        discard_below=options["discard_below"],
        actor=job.requested_by,
    )
    return {**asdict(applied), "batch": str(applied.batch), "explained": applied.explained}


class _SettledMeanwhile(Exception):
    """The job was marked failed while its worker did it: the worker's changes roll back."""


def _failed(job: SweepJob, code: str, message: str, details: dict | None = None) -> SweepJob:
    """Mark the job failed, unless it is finished already (done by its worker, or failed)."""
    job.status = SweepJob.Status.FAILED
    job.error = {"code": code, "message": message, "details": details or {}}
    job.finished_at = timezone.now()
    SweepJob.objects.filter(pk=job.pk, status__in=UNFINISHED_JOBS).update(
        status=job.status, error=job.error, finished_at=job.finished_at
    )
    return job
