"""What a sweep's page shows besides the run itself: whether Resume is worth offering, each
application with the reverse that undid it, and the latest Apply or Reverse done in the
background (`SweepJob`)."""

from __future__ import annotations

from datetime import datetime

from palace.models import AuditAction, AuditEntry, AuditTarget
from review.models import UNFINISHED_RUNS, SweepJob, SweepRun
from review.selectors.sweeps import applied_since_last_reverse, worked_on
from review.services.sweep_outcomes import Reversed


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


def under_way(run: SweepRun, job: SweepJob | None) -> bool:
    """Whether the page has something to follow: the run sweeping, or its job not done."""
    return run.status in UNFINISHED_RUNS or (job is not None and job.unfinished)


def job_outcome(job: SweepJob | None) -> str:
    """The latest job's outcome in words, as the request said it when it applied in place: ""
    while it is under way (the page says so), or when there is none."""
    if job is None or job.unfinished:
        return ""
    if job.status == SweepJob.Status.FAILED:
        verb = "Apply" if job.kind == SweepJob.Kind.APPLY else "Reverse"
        error = job.error or {}
        if error.get("code") == "cancelled":
            return f"{verb} cancelled: {error.get('message', '')} Nothing of it was done."
        return f"{verb} failed: {error.get('message', '')} Nothing of it was done."
    result = job.result or {}
    if job.kind == SweepJob.Kind.APPLY:
        return f"Applied: {result.get('explained', '')} (batch {result.get('batch', '')})."
    reversed_ = Reversed(result.get("undone", 0), result.get("not_restored", []))
    text = f"Reversed: {reversed_.undone} undone."
    if reversed_.not_restored:
        text += f" Undone in part: {reversed_.explained}."
    return text
