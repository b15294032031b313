"""Apply and Reverse run in a worker (`review.services.sweep_jobs`, `review.tasks.run_sweep_job`):
the request checks what it can, records the job and answers 202 at once; the job is polled on
`GET /api/sweeps/{id}`; one job of a run at a time; a crash fails the job with nothing applied,
and it can be asked for again. Here the jobs wait in the database's queue until `db_worker` runs
them, as in production (the other tests run tasks at once)."""

import contextlib
from datetime import timedelta

import psycopg
import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from dedup.errors import Conflict
from palace.models import AuditEntry, DrawerLink
from review.models import Proposal, SweepJob
from review.selectors.sweeps import STUCK_AFTER
from review.services import sweep_apply, sweep_jobs
from review.services import sweeps as sweep_services
from review.tasks import run_sweep_job
from tests.conftest import person_client
from tests.review.test_sweep_pages import DATABASE_TASKS
from tests.review.test_sweeps import palace, run_sweep  # noqa: F401

# Transactions of their own: `db_worker` closes its connection after a task, which ends the
# transaction a test would otherwise run in (on PostgreSQL).
pytestmark = pytest.mark.django_db(transaction=True)


def work() -> None:
    """What a worker would do: every queued task, then stop."""
    call_command("db_worker", "--batch", "--no-startup-delay", "--interval", "0")


@pytest.fixture
def swept(palace, settings):  # noqa: F811
    """A finished run of ops/runbooks, its jobs queued in the database."""
    run = run_sweep(wing="ops", room="runbooks")
    settings.TASKS = DATABASE_TASKS
    return run


@pytest.fixture
def client(curator):
    return person_client(curator)


def apply_posted(client, run, **body):
    return client.post(f"/api/sweeps/{run.pk}/apply", {"threshold": 0.9, **body}, format="json")


def test_an_apply_is_queued_and_answered_at_once(swept, client):
    response = apply_posted(client, swept)
    assert response.status_code == 202
    assert response["Location"] == f"/api/sweeps/{swept.pk}"
    job = response.json()["job"]
    assert job["status"] == "queued"
    assert job["kind"] == "apply"
    assert job["applied"] is None
    assert job["options"]["threshold"] == 0.9


def test_nothing_is_applied_before_the_worker_runs(swept, client):
    apply_posted(client, swept)
    assert not swept.proposals.exclude(status=Proposal.Status.PROPOSED).exists()
    assert not AuditEntry.objects.filter(action="sweep.apply").exists()
    assert DBTaskResult.objects.get().task_path == run_sweep_job.module_path


def test_the_worker_applies_it_and_the_sweep_shows_the_outcome(swept, client):
    apply_posted(client, swept)
    work()
    job = client.get(f"/api/sweeps/{swept.pk}").json()["job"]
    assert job["status"] == "done"
    applied = job["applied"]
    assert applied["merged"] == swept.proposals.filter(status="merged").count() > 0
    assert applied["explained"] == applied["outcome"]["explained"]
    assert set(applied) == {
        "batch",
        "linked",
        "merged",
        "discarded",
        "distinct",
        "outcome",
        "explained",
    }  # the fields the request answered when it applied in place


def test_the_one_who_asked_is_recorded_as_the_actor(swept, client, curator):
    apply_posted(client, swept)
    work()
    assert AuditEntry.objects.get(action="sweep.apply").actor == curator
    merges = AuditEntry.objects.filter(action="review.merge")
    assert set(merges.values_list("actor", flat=True)) == {curator.pk}
    swept.refresh_from_db()
    assert swept.applications[-1]["by"] == curator.username
    assert SweepJob.objects.get().requested_by == curator


def test_a_reverse_is_queued_and_done_by_the_worker(swept, client, curator):
    sweep_services.apply(swept, threshold=0.9, actor=curator)
    response = client.post(f"/api/sweeps/{swept.pk}/reverse")
    assert response.status_code == 202
    assert response.json()["job"]["status"] == "queued"
    assert swept.proposals.filter(status="merged").exists()
    work()
    job = client.get(f"/api/sweeps/{swept.pk}").json()["job"]
    assert job["status"] == "done"
    assert job["reversed"]["undone"] > 0
    assert job["reversed"]["not_restored"] == []
    assert not swept.proposals.filter(status="merged").exists()
    assert AuditEntry.objects.get(action="sweep.reverse").actor == curator


# --- one at a time ------------------------------------------------------------------------------


def test_a_second_apply_while_one_is_queued_is_refused(swept, client):
    first = apply_posted(client, swept).json()["job"]
    second = apply_posted(client, swept, threshold=0.95)
    assert second.status_code == 409
    assert second.json()["code"] == "application_under_way"
    assert second.json()["details"] == {"run": swept.pk, "job": first["id"]}
    assert SweepJob.objects.count() == 1


@contextlib.contextmanager
def worker_at_work(job_id: int):
    """A live worker doing the job: marked running now, and on PostgreSQL its session lock held
    by a connection of its own, as `db_worker`'s would be."""
    SweepJob.objects.filter(pk=job_id).update(
        status=SweepJob.Status.RUNNING, started_at=timezone.now()
    )
    if connection.vendor != "postgresql":
        yield
        return
    with psycopg.connect(**connection.get_connection_params()) as other:
        other.execute("SELECT pg_advisory_lock(%s)", [sweep_jobs.worker_lock(job_id)])
        yield


def test_a_reverse_while_an_apply_runs_is_refused(swept, client):
    job = apply_posted(client, swept).json()["job"]
    with worker_at_work(job["id"]):
        refused = client.post(f"/api/sweeps/{swept.pk}/reverse")
    assert refused.status_code == 409
    assert refused.json()["code"] == "application_under_way"


def stopped_worker(job_id: int) -> None:
    """A job marked running whose worker was killed: its lock went with its connection (and on
    SQLite, it started longer ago than a job is waited for)."""
    SweepJob.objects.filter(pk=job_id).update(
        status=SweepJob.Status.RUNNING,
        started_at=timezone.now() - STUCK_AFTER - timedelta(minutes=1),
    )


def test_a_job_whose_worker_stopped_holds_the_run_no_longer(swept, client):
    first = apply_posted(client, swept).json()["job"]
    stopped_worker(first["id"])
    again = apply_posted(client, swept)
    assert again.status_code == 202
    failed = SweepJob.objects.get(pk=first["id"])
    assert failed.status == SweepJob.Status.FAILED
    assert failed.error["code"] == "worker_stopped"


def test_a_job_running_less_than_the_wait_on_sqlite_still_holds_it(swept, client):
    if connection.vendor == "postgresql":
        pytest.skip("PostgreSQL asks the worker's lock, not the time")
    job = apply_posted(client, swept).json()["job"]
    SweepJob.objects.filter(pk=job["id"]).update(
        status=SweepJob.Status.RUNNING, started_at=timezone.now() - timedelta(minutes=5)
    )
    assert apply_posted(client, swept).status_code == 409


def test_once_done_the_run_takes_another(swept, client):
    apply_posted(client, swept)
    work()
    assert client.post(f"/api/sweeps/{swept.pk}/reverse").status_code == 202


def test_the_database_keeps_one_unfinished_job_per_run(swept):
    SweepJob.objects.create(run=swept, kind="apply")
    with pytest.raises(IntegrityError), transaction.atomic():
        SweepJob.objects.create(run=swept, kind="reverse")
    SweepJob.objects.update(status=SweepJob.Status.FAILED)
    SweepJob.objects.create(run=swept, kind="reverse")  # a failed one holds nothing


def test_two_sent_at_once_one_is_refused_by_the_constraint(swept, curator, monkeypatch):
    """The other passed the check before the first was recorded: the database refuses it."""
    sweep_jobs.apply_queue(swept, threshold=0.9, actor=curator, queue=run_sweep_job.enqueue)
    monkeypatch.setattr(sweep_jobs, "under_way_refused", _checked_once())
    with pytest.raises(Conflict) as refused:
        sweep_jobs.apply_queue(swept, threshold=0.9, actor=curator, queue=run_sweep_job.enqueue)
    assert refused.value.code == "application_under_way"
    assert DBTaskResult.objects.count() == 1


def _checked_once():
    real, calls = sweep_jobs.under_way_refused, []

    def check(run):
        calls.append(run)
        if len(calls) > 1:  # after the constraint refused it
            real(run)

    return check


# --- refused up front, with the codes the request gave -----------------------------------------


def test_an_unfinished_run_is_refused_up_front(palace, client, settings):  # noqa: F811
    settings.TASKS = DATABASE_TASKS
    run = sweep_services.start(wing="ops", threshold=0.9)
    refused = apply_posted(client, run)
    assert (refused.status_code, refused.json()["code"]) == (409, "run_not_done")
    assert not SweepJob.objects.exists()


@pytest.mark.parametrize(
    "body",
    [{"threshold": 0.1}, {"tiers": ["typo"]}, {"tiers": []}],
    ids=["threshold out of range", "an entity tier", "no tier"],
)
def test_bad_options_are_refused_up_front(swept, client, body):
    refused = apply_posted(client, swept, **body)
    assert (refused.status_code, refused.json()["code"]) == (400, "invalid")
    assert not SweepJob.objects.exists()


@pytest.mark.parametrize(
    "options",
    [{}, {"tiers": ["near"]}, {"discard_below": True}, {"threshold": 1.0, "tiers": ["exact"]}],
    ids=["every tier", "one tier", "discarding below", "exact ones at 1.0"],
)
def test_nothing_to_apply_is_refused_up_front_as_the_apply_says_it(swept, client, curator, options):
    """The same apply sent twice: refused by the request, in the apply's own words."""
    options = {"threshold": 0.9, **options}
    sweep_services.apply(swept, actor=curator, **options)
    with pytest.raises(Conflict) as in_place:
        sweep_services.apply(swept, actor=curator, **options)
    refused = apply_posted(client, swept, **options)
    assert (refused.status_code, refused.json()["code"]) == (409, "nothing_to_apply")
    assert refused.json()["error"] == in_place.value.message
    assert not SweepJob.objects.exists()


def test_a_reverse_with_nothing_applied_is_refused_up_front(swept, client):
    refused = client.post(f"/api/sweeps/{swept.pk}/reverse")
    assert (refused.status_code, refused.json()["code"]) == (409, "run_not_applied")
    assert not SweepJob.objects.exists()


# --- failures -----------------------------------------------------------------------------------


@pytest.fixture
def crashing(monkeypatch):
    """The apply crashes on its second proposal, after the first was linked or merged."""
    real, done = sweep_apply._apply_one, []

    def apply_one(*args, **kwargs):
        if done:
            raise RuntimeError("disk on fire")
        done.append(real(*args, **kwargs))
        return done[-1]

    monkeypatch.setattr(sweep_apply, "_apply_one", apply_one)
    return monkeypatch


def test_a_crash_fails_the_job_with_its_error(swept, client, crashing):
    apply_posted(client, swept)
    work()
    job = client.get(f"/api/sweeps/{swept.pk}").json()["job"]
    assert job["status"] == "failed"
    assert job["error"]["code"] == "server_error"
    assert job["error"]["message"] == "RuntimeError: disk on fire"
    assert job["applied"] is None


def test_a_crash_applies_nothing(swept, client, crashing):
    links = DrawerLink.objects.count()
    apply_posted(client, swept)
    work()
    assert not swept.proposals.exclude(status=Proposal.Status.PROPOSED).exists()
    assert DrawerLink.objects.count() == links
    assert not AuditEntry.objects.filter(action__in=("sweep.apply", "review.merge")).exists()
    swept.refresh_from_db()
    assert swept.applications == []


def test_a_failed_job_can_be_asked_for_again(swept, client, crashing):
    apply_posted(client, swept)
    work()
    crashing.undo()
    assert apply_posted(client, swept).status_code == 202
    work()
    assert client.get(f"/api/sweeps/{swept.pk}").json()["job"]["status"] == "done"
    assert SweepJob.objects.filter(status="failed").count() == 1


def test_a_refusal_met_by_the_worker_fails_the_job_with_its_code(swept, client, curator):
    """Applied in place (by the command) after it was queued: nothing is left to apply."""
    apply_posted(client, swept)
    sweep_services.apply(swept, threshold=0.9, actor=curator)
    work()
    job = SweepJob.objects.get()
    assert job.status == "failed"
    assert job.error["code"] == "nothing_to_apply"
    assert job.error["message"].startswith("Nothing to apply:")


def test_a_task_run_twice_does_the_job_once(swept, client):
    apply_posted(client, swept)
    job = SweepJob.objects.get()
    sweep_jobs.job_run(job.pk)
    again = sweep_jobs.job_run(job.pk)
    assert again.status == "done"
    assert AuditEntry.objects.filter(action="sweep.apply").count() == 1


def test_the_commands_apply_and_reverse_in_their_own_process(swept):
    call_command("sweep_apply", str(swept.pk), "--threshold", "0.9")
    assert swept.proposals.filter(status="merged").exists()
    call_command("sweep_reverse", str(swept.pk))
    assert not swept.proposals.filter(status="merged").exists()
    assert not SweepJob.objects.exists()
    assert not DBTaskResult.objects.exists()


# --- GET /api/sweeps ----------------------------------------------------------------------------


def test_the_list_gives_the_runs_newest_first(palace, client):  # noqa: F811
    older = run_sweep(wing="ops", room="runbooks")
    newer = run_sweep(wing="ops", room="elsewhere")
    listed = client.get("/api/sweeps").json()["results"]
    assert [run["id"] for run in listed] == [newer.pk, older.pk]


def test_the_list_gives_each_run_as_its_detail_does_but_its_summary(swept, client):
    apply_posted(client, swept)
    (listed,) = client.get("/api/sweeps").json()["results"]
    detail = client.get(f"/api/sweeps/{swept.pk}").json()
    assert detail.pop("summary") is not None
    assert listed == detail
    assert listed["job"]["status"] == "queued"


def test_the_list_shows_a_stopped_job_failed(swept, client):
    first = apply_posted(client, swept).json()["job"]
    stopped_worker(first["id"])
    (listed,) = client.get("/api/sweeps").json()["results"]
    assert listed["job"]["status"] == "failed"


def test_the_list_is_paginated(palace, client):  # noqa: F811
    older = run_sweep(wing="ops", room="runbooks")
    newer = run_sweep(wing="ops", room="elsewhere")
    first = client.get("/api/sweeps", {"page_size": 1}).json()
    assert [run["id"] for run in first["results"]] == [newer.pk]
    following = client.get(first["next"]).json()
    assert [run["id"] for run in following["results"]] == [older.pk]


def test_the_list_reads_a_page_in_queries_however_many_runs(palace, client, curator):  # noqa: F811
    def applied(run):
        SweepJob.objects.create(run=run, kind="reverse", status="done", requested_by=curator)

    for room in ("runbooks", "elsewhere"):
        applied(run_sweep(wing="ops", room=room))
    with CaptureQueriesContext(connection) as two:
        client.get("/api/sweeps")
    applied(run_sweep(wing="agents"))
    with CaptureQueriesContext(connection) as three:
        client.get("/api/sweeps")
    jobs = [q for q in three.captured_queries if "review_sweepjob" in q["sql"]]
    assert len(jobs) == 1
    assert len(three) == len(two)  # no query a run: the list leaves the summaries out


def test_the_run_followed_shows_a_stopped_job_failed(swept, client):
    first = apply_posted(client, swept).json()["job"]
    stopped_worker(first["id"])
    job = client.get(f"/api/sweeps/{swept.pk}").json()["job"]
    assert job["status"] == "failed"
    assert job["error"]["code"] == "worker_stopped"


def test_the_run_followed_leaves_a_job_at_work_running(swept, client):
    first = apply_posted(client, swept).json()["job"]
    with worker_at_work(first["id"]):
        job = client.get(f"/api/sweeps/{swept.pk}").json()["job"]
    assert job["status"] == "running"


@pytest.mark.parametrize(
    "command", [("sweep_apply", "--threshold", "0.9"), ("sweep_reverse",)], ids=lambda c: c[0]
)
def test_the_commands_refuse_while_a_job_of_the_run_is_under_way(swept, client, command):
    from django.core.management.base import CommandError

    apply_posted(client, swept)
    with pytest.raises(CommandError, match="an apply is queued"):
        call_command(command[0], str(swept.pk), *command[1:])


# Cancelling a job that waits ----------------------------------------------------------------------


def test_a_queued_apply_is_cancelled_and_the_worker_then_does_nothing(swept, client):
    apply_posted(client, swept)
    response = client.post(f"/api/sweeps/{swept.pk}/cancel")
    assert response.status_code == 200
    job = response.json()["job"]
    assert job["status"] == "failed"
    assert job["error"]["code"] == "cancelled"
    work()
    assert not swept.proposals.exclude(status=Proposal.Status.PROPOSED).exists()


def test_once_cancelled_the_run_takes_another(swept, client):
    apply_posted(client, swept)
    client.post(f"/api/sweeps/{swept.pk}/cancel")
    assert apply_posted(client, swept).status_code == 202


def test_a_job_a_worker_does_is_not_cancelled(swept, client):
    job = apply_posted(client, swept).json()["job"]
    with worker_at_work(job["id"]):
        refused = client.post(f"/api/sweeps/{swept.pk}/cancel")
    assert refused.status_code == 409
    assert refused.json()["code"] == "job_running"


def test_cancelling_with_nothing_waiting_is_refused(swept, client):
    refused = client.post(f"/api/sweeps/{swept.pk}/cancel")
    assert refused.status_code == 409
    assert refused.json()["code"] == "no_job_waiting"


def test_the_page_offers_cancel_while_the_job_waits_and_cancels_it(swept, curator):
    from django.test import Client

    browser = Client()
    browser.force_login(curator)
    person_client(curator).post(f"/api/sweeps/{swept.pk}/apply", {"threshold": 0.9}, format="json")
    page = browser.get(f"/sweeps/{swept.pk}/").content.decode()
    assert 'value="cancel"' in page
    browser.post(f"/sweeps/{swept.pk}/", {"action": "cancel"})
    outcome = browser.get(f"/sweeps/{swept.pk}/").content.decode()
    assert "Apply cancelled: Cancelled by" in outcome


def test_a_job_whose_asker_may_no_longer_decide_fails(swept, client, curator):
    """The curator's right was taken while the job waited for a worker: it is not applied in
    their name."""
    apply_posted(client, swept)
    curator.groups.clear()
    work()
    job = SweepJob.objects.get()
    assert job.status == SweepJob.Status.FAILED
    assert job.error["code"] == "permission_denied"
    assert not AuditEntry.objects.filter(action="sweep.apply").exists()


def test_a_job_whose_asker_was_closed_fails(swept, client, curator):
    apply_posted(client, swept)
    curator.is_active = False
    curator.save(update_fields=["is_active"])
    work()
    assert SweepJob.objects.get().error["code"] == "permission_denied"


def test_a_tier_named_twice_is_recorded_once(swept, client):
    response = apply_posted(client, swept, tiers=["near", "near", "exact"])
    assert response.json()["job"]["options"]["tiers"] == ["near", "exact"]


def test_judging_while_its_apply_runs_is_refused_at_once(swept, client):
    """The worker holds the run's proposals until it commits: a judgement had waited for the
    lock to time out (503 after 20 s)."""
    job = apply_posted(client, swept).json()["job"]
    proposal = swept.proposals.first()
    with worker_at_work(job["id"]):
        response = client.post(
            f"/api/review/items/p{proposal.pk}/decisions", {"action": "same"}, format="json"
        )
    assert response.status_code == 409
    assert response.json()["code"] == "application_under_way"
    assert not AuditEntry.objects.filter(action__startswith="review.").exists()


def test_judging_while_its_apply_waits_for_a_worker_is_done(swept, client):
    apply_posted(client, swept)
    proposal = swept.proposals.first()
    response = client.post(
        f"/api/review/items/p{proposal.pk}/decisions", {"action": "same"}, format="json"
    )
    assert response.status_code == 201


def test_judging_while_a_stopped_workers_job_is_marked_running_is_done(swept, client):
    """Its worker's changes rolled back: nothing holds the proposals."""
    job = apply_posted(client, swept).json()["job"]
    stopped_worker(job["id"])
    proposal = swept.proposals.first()
    response = client.post(
        f"/api/review/items/p{proposal.pk}/decisions", {"action": "same"}, format="json"
    )
    assert response.status_code == 201


def test_a_job_whose_askers_account_was_deleted_fails(swept, client, curator):
    """The foreign key is set null: the job had run as no one."""
    apply_posted(client, swept)
    curator.delete()
    work()
    assert SweepJob.objects.get().error["code"] == "permission_denied"


def test_a_job_queued_before_askers_were_named_names_its_asker(swept, client, curator):
    apply_posted(client, swept)
    job = SweepJob.objects.get()
    job.options = {k: v for k, v in job.options.items() if k != "asked_by"}
    job.save(update_fields=["options"])
    curator.groups.clear()
    work()
    assert SweepJob.objects.get().error["message"].startswith(f"{curator.get_username()} may")
