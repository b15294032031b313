"""What a sweep's page shows besides the run itself: whether Resume is worth offering, each
application with the reverse that undid it, and the what-if table's thresholds."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from palace.models import AuditAction, AuditEntry, AuditTarget
from review.gates import MERGE_TIERS, gates_pass
from review.models import SweepRun
from review.tasks import run_sweep, run_sweep_part

# A part is at most 50,000 drawers, a few seconds to a minute of a worker's time (docs/scaling.md):
# a task still "running" after this long had its worker killed under it (django-tasks' database
# backend has no heartbeat, so a dead worker's task stays RUNNING forever).
STUCK_AFTER = timedelta(minutes=10)
STANDARD_THRESHOLDS = (0.9, 0.95, 0.98, 1.0)
STEPS = 4


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
    rows = AuditEntry.objects.filter(target_type=AuditTarget.SWEEP, target_id=str(run.pk))
    last_reverse = (
        rows.filter(action=AuditAction.SWEEP_REVERSE).order_by("-pk").values_list("pk", flat=True)
    ).first()
    return rows.filter(action=AuditAction.SWEEP_APPLY, pk__gt=last_reverse or 0).exists()


def what_if_thresholds(run: SweepRun) -> list[float]:
    """The run's own threshold, STEPS even steps from it to 1.0, and the usual ones above it: a
    run at 0.8 whose proposals are all below 0.9 shows them, not a table of zeros."""
    low = run.threshold
    steps = {round(low + (1.0 - low) * k / STEPS, 2) for k in range(1, STEPS + 1)}
    return sorted({low, *steps, *(t for t in STANDARD_THRESHOLDS if t > low)})


def what_if(run: SweepRun) -> list[tuple[str, dict[str, int]]]:
    """What applying at each threshold would do, counted as `selectors.sweeps.summary` counts
    (every proposal at or above it; one judged "not the same" is recorded distinct), for
    `what_if_thresholds`. The summary's own table has fixed thresholds; this is its rule over
    the run's."""
    rows = [
        (score, tier in MERGE_TIERS and gates_pass(gates) and not run.entities, verdict == "wrong")
        for tier, score, gates, verdict in run.proposals.values_list(
            "tier", "score", "gates", "verdict"
        )
    ]
    table = []
    for threshold in what_if_thresholds(run):
        counts = {"links": 0, "merges": 0, "distinct": 0}
        for score, merges, wrong in rows:
            if score >= threshold:
                counts["distinct" if wrong else "merges" if merges else "links"] += 1
        label = f"{threshold:.2f}" if round(threshold, 2) == threshold else f"{threshold:.3f}"
        table.append((label, counts))
    return table
