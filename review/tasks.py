"""Background work through Django's tasks API (django-tasks, database backend): run the worker
with `manage.py db_worker`, on as many machines as the database serves. A sweep is planned into
parts, each its own task, so any number of workers sweep it in parallel (see `sweep_parts`). An
Apply or a Reverse a curator asks for is a task too (`sweep_jobs`)."""

import logging

from django_tasks import task

from dedup.errors import Conflict
from review.models import SweepRun
from review.services import sweep_jobs, sweep_parts

logger = logging.getLogger("castellan.sweeps")


@task()
def run_sweep(run_id: int) -> dict:
    """Plan the run into parts and enqueue each unfinished one; enqueueing it again (after a
    crash) resumes the unfinished parts where their last committed batch left them."""
    try:
        parts = sweep_parts.resume(SweepRun.objects.get(pk=run_id))
    except Conflict as refused:  # a failed run, and another of its scope under way meanwhile
        logger.warning("sweep %s not resumed: %s", run_id, refused.message)
        return {"parts": 0, "refused": refused.code}
    logger.info("sweep %s: %s part(s) queued", run_id, len(parts))
    for part in parts:
        run_sweep_part.enqueue(part.pk)
    if not parts:
        sweep_parts.finish(run_id)
    return {"parts": len(parts)}


@task()
def run_sweep_part(part_id: int) -> dict:
    # Named in the worker's log, whose own lines name only the task's id.
    logger.info("sweep part %s: started", part_id)
    run = sweep_parts.run_part(part_id)
    logger.info("sweep part %s: done; sweep %s %s", part_id, run.pk, run.status)
    return {"run": run.pk, "status": run.status}


@task()
def run_sweep_job(job_id: int) -> dict:
    """An Apply or a Reverse of a run a curator asked for (`sweep_jobs`): done as that user,
    all or nothing; its outcome, or why it failed, is stored on the job."""
    job = sweep_jobs.job_run(job_id)
    logger.info("sweep job %s (%s of sweep %s): %s", job.pk, job.kind, job.run_id, job.status)
    return {"job": job.pk, "status": job.status}
