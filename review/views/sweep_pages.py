"""What a sweep's page shows besides the run itself: whether Resume is worth offering, and each
application with the reverse that undid it."""

from __future__ import annotations

from datetime import datetime

from palace.models import AuditAction, AuditEntry, AuditTarget
from review.models import SweepRun
from review.selectors.sweeps import applied_since_last_reverse, worked_on


def looks_stuck(run: SweepRun) -> bool:
    """Resume is offered when it can help (README, "A worker that stops mid-run"): a failed run,
    or an unfinished one that no worker is on (`review.selectors.sweeps.worked_on`)."""
    if run.status == SweepRun.Status.FAILED:
        return True
    return run.status != SweepRun.Status.DONE and not worked_on(run)


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
