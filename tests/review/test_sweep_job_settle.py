"""A job is settled as failed only when nothing will finish it, and never over what its worker
finished: a request that reads a job as running, and meanwhile sees its worker's lock go because
the worker committed `done`, keeps `done`; a job whose task ended before claiming it does not
hold its run for good."""

import psycopg
import pytest
from django.db import OperationalError, connection

from review.models import SweepJob
from review.services import sweep_jobs
from tests.review.test_sweep_jobs import apply_posted, client, swept, work  # noqa: F401
from tests.review.test_sweeps import palace  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a worker's session lock")
def test_a_job_finished_between_the_read_and_the_lock_check_stays_done(
    swept,  # noqa: F811
    client,  # noqa: F811
    monkeypatch,
):
    job_id = apply_posted(client, swept).json()["job"]["id"]
    SweepJob.objects.filter(pk=job_id).update(status=SweepJob.Status.RUNNING)
    key = sweep_jobs.worker_lock(job_id)
    with psycopg.connect(**connection.get_connection_params(), autocommit=True) as worker:
        worker.execute("SELECT pg_advisory_lock(%s)", [key])
        gone = sweep_jobs.worker_gone

        def worker_finishes_first(job):
            # The request has read the job as running; the worker now commits its outcome
            # and, leaving `_worker_holding`, lets the lock go.
            worker.execute(
                "UPDATE review_sweepjob SET status = 'done', result = '{}'::jsonb WHERE id = %s",
                [job_id],
            )
            worker.execute("SELECT pg_advisory_unlock(%s)", [key])
            return gone(job)

        monkeypatch.setattr(sweep_jobs, "worker_gone", worker_finishes_first)
        sweep_jobs.stopped_settled(swept)  # as the run's page or GET /api/sweeps/{id} does
    assert SweepJob.objects.get(pk=job_id).status == SweepJob.Status.DONE


def test_a_job_whose_task_failed_before_claiming_it_does_not_hold_the_run(
    swept,  # noqa: F811
    client,  # noqa: F811
    monkeypatch,
):
    job_id = apply_posted(client, swept).json()["job"]["id"]

    def unavailable(job_id):
        raise OperationalError("the database went away")

    monkeypatch.setattr(sweep_jobs, "_claimed", unavailable)
    work()
    monkeypatch.undo()
    assert SweepJob.objects.get(pk=job_id).status == SweepJob.Status.QUEUED
    again = apply_posted(client, swept)
    assert again.status_code == 202
    failed = SweepJob.objects.get(pk=job_id)
    assert failed.status == SweepJob.Status.FAILED
    assert failed.error["message"] == sweep_jobs.TASK_ENDED


def test_a_worker_whose_job_was_settled_meanwhile_undoes_its_changes(
    swept,  # noqa: F811
    client,  # noqa: F811
    monkeypatch,
):
    """A job taken for stopped after its worker claimed it (on SQLite, one running past the
    wait): the worker, finishing after, rolls its changes back rather than saving `done` over
    `failed`."""
    job_id = apply_posted(client, swept).json()["job"]["id"]
    claimed = sweep_jobs._claimed

    def settled_once_claimed(job_id):
        job = claimed(job_id)
        sweep_jobs._failed(SweepJob.objects.get(pk=job_id), "worker_stopped", "taken")
        return job

    monkeypatch.setattr(sweep_jobs, "_claimed", settled_once_claimed)
    job = sweep_jobs.job_run(job_id)
    assert job.status == SweepJob.Status.FAILED
    assert not swept.proposals.exclude(status="proposed").exists()
