"""What a sweep's page shows besides the run itself: whether Resume is worth offering, and each
application with the reverse that undid it."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from palace.models import AuditAction, AuditEntry, AuditTarget
from review.models import SweepRun
from review.selectors.sweeps import applied_since_last_reverse
from review.tasks import run_sweep, run_sweep_part

# A part is at most 50,000 drawers, a few seconds to a minute of a worker's time (docs/scaling.md):
# a task still "running" after this long had its worker killed under it (django-tasks' database
# backend has no heartbeat, so a dead worker's task stays RUNNING forever).
STUCK_AFTER = timedelta(minutes=10)


def looks_stuck(run: SweepRun) -> bool:
    """Resume is offered when it can help (README, "A worker that stops mid-run"): a failed run,
    or an unfinished one that no worker is on. Not while its task waits in the queue (a fresh
    run, or no worker started yet: resuming would only queue it twice), nor while a worker has
    had one of its tasks for less than STUCK_AFTER."""
    if run.status == SweepRun.Status.FAILED:
        return True
    if run.status == SweepRun.Status.DONE:
        return False
    parts = {str(pk) for pk in run.parts.values_list("pk", flat=True)}
    in_flight = DBTaskResult.objects.filter(
        task_path__in=(run_sweep.module_path, run_sweep_part.module_path),
        status__in=(TaskResultStatus.READY, TaskResultStatus.RUNNING),
    ).values_list("task_path", "args_kwargs", "status", "started_at")
    since = timezone.now() - STUCK_AFTER
    for path, args_kwargs, status, started_at in in_flight[:1000]:  # the tasks in flight: few
        (arg, *_) = args_kwargs.get("args") or [None]
        ours = str(arg) in parts if path == run_sweep_part.module_path else arg == run.pk
        # Waiting for a worker, or with one that took it less than STUCK_AFTER ago.
        alive = status == TaskResultStatus.READY or started_at is None or started_at > since
        if ours and alive:
            return False
    return True


def applications(run: SweepRun) -> list[dict]:
    """The run's applications, oldest first, each with the reverse that undid it (None while
    it stands), so a reversed "24 linked" is not read as still in force."""
    reverses = list(
        AuditEntry.objects.filter(
            target_type=AuditTarget.SWEEP,
            target_id=str(run.pk),
            action=AuditAction.SWEEP_REVERSE,
        ).order_by("pk")
    )
    shown = []
    for applied in run.applications:
        at = datetime.fromisoformat(applied["at"])
        undone = next((r for r in reverses if r.created_at >= at), None)
        shown.append({**applied, "reversed": undone})
    return shown


def is_applied(run: SweepRun) -> bool:
    """Whether a Reverse has anything to undo: an application since the last reverse."""
    return applied_since_last_reverse(run).exists()
