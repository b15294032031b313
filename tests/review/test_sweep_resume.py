"""Resume queues a run again only when no worker is on it (README, "A worker that stops
mid-run"): the console offered it so, but the API queued a run waiting for its worker, or one
a worker had just taken, at every call (eight resumes at once queued 34 tasks for a run of four
parts: the concurrency trial). Refused `sweep_under_way` then; of resumes at once, one queues it."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from dedup import services as write
from dedup.errors import Conflict
from review.models import SweepRun
from review.selectors.sweeps import STUCK_AFTER, SWEEP_TASKS, worked_on
from review.services import sweep_parts
from review.services import sweeps as sweep_services
from review.tasks import run_sweep, run_sweep_part
from tests.conftest import person_client
from tests.races import race_codes
from tests.review.sweep_data import legacy
from tests.review.test_sweep_pages import DATABASE_TASKS

pytestmark = pytest.mark.django_db
FACT = "Backups run nightly at two in the morning and are kept for thirty days on the NAS."


@pytest.fixture
def queued(dedup_settings, settings):
    """A run queued for the workers (its task waits in the database's queue)."""
    settings.TASKS = DATABASE_TASKS
    room = write.room_get_or_create(wing="ops", room="runbooks")
    for text in (FACT, FACT.replace("nightly", "nigthly")):
        legacy(room, text)
    run = sweep_services.start(wing="ops", room="runbooks", threshold=0.9)
    run_sweep.enqueue(run.pk)
    return run


def taken(ago: timedelta) -> None:
    """The queued task taken by a worker `ago`, the run running."""
    started = timezone.now() - ago
    DBTaskResult.objects.update(status="RUNNING", started_at=started)
    SweepRun.objects.update(status=SweepRun.Status.RUNNING)


def test_the_task_paths_named_are_the_tasks():
    assert (run_sweep.module_path, run_sweep_part.module_path) == SWEEP_TASKS


def test_a_run_waiting_for_its_worker_is_not_queued_again(queued, curator):
    response = person_client(curator).post(f"/api/sweeps/{queued.pk}/resume")
    assert (response.status_code, response.json()["code"]) == (409, "sweep_under_way")
    assert response.json()["details"] == {"run": queued.pk}
    assert DBTaskResult.objects.count() == 1


def test_a_run_a_worker_took_lately_is_not_queued_again(queued, curator):
    taken(STUCK_AFTER - timedelta(minutes=1))
    response = person_client(curator).post(f"/api/sweeps/{queued.pk}/resume")
    assert response.status_code == 409
    assert DBTaskResult.objects.count() == 1


def test_a_run_whose_worker_died_is_queued_again(queued, curator):
    taken(STUCK_AFTER + timedelta(minutes=1))
    response = person_client(curator).post(f"/api/sweeps/{queued.pk}/resume")
    assert response.status_code == 202
    assert DBTaskResult.objects.filter(status="READY").count() == 1


def test_a_failed_run_is_queued_again_once(queued, curator):
    """A failed run stayed failed until a worker took its task, so each resume queued it again
    (the review)."""
    SweepRun.objects.update(status=SweepRun.Status.FAILED)
    DBTaskResult.objects.update(status="FAILED")
    client = person_client(curator)
    assert client.post(f"/api/sweeps/{queued.pk}/resume").status_code == 202
    assert SweepRun.objects.get().status == SweepRun.Status.QUEUED
    assert client.post(f"/api/sweeps/{queued.pk}/resume").status_code == 409
    assert DBTaskResult.objects.filter(status="READY").count() == 1


def test_the_console_refuses_the_same(queued, client, curator):
    client.force_login(curator)
    page = client.post(f"/sweeps/{queued.pk}/", {"action": "resume"}, follow=True)
    assert "a worker has it, or it waits for one" in page.content.decode()
    assert DBTaskResult.objects.count() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_of_resumes_at_once_one_queues_the_run(queued):
    taken(STUCK_AFTER + timedelta(minutes=1))
    codes = race_codes(*[lambda: sweep_services.queue_resumed(queued.pk, run_sweep.enqueue)] * 6)
    assert sorted(codes) == ["ok"] + ["sweep_under_way"] * 5
    assert DBTaskResult.objects.filter(status="READY").count() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_of_resumes_of_a_failed_run_at_once_one_queues_it(queued):
    SweepRun.objects.update(status=SweepRun.Status.FAILED)
    DBTaskResult.objects.update(status="FAILED")
    codes = race_codes(*[lambda: sweep_services.queue_resumed(queued.pk, run_sweep.enqueue)] * 6)
    assert sorted(codes) == ["ok"] + ["sweep_under_way"] * 5
    assert DBTaskResult.objects.filter(status="READY").count() == 1


def test_the_refusal_is_a_conflict(queued):
    with pytest.raises(Conflict, match=f"Sweep {queued.pk} is queued"):
        sweep_services.queue_resumed(queued.pk, run_sweep.enqueue)


def test_a_part_of_the_run_waiting_for_a_worker_counts(queued, curator):
    """The run's own task taken and stuck, but one of its parts' tasks queued since."""
    taken(STUCK_AFTER + timedelta(minutes=1))
    (part,) = sweep_parts.plan(queued)
    run_sweep_part.enqueue(part.pk)
    assert worked_on(queued)


def test_another_run_s_tasks_do_not_count(queued, curator):
    taken(STUCK_AFTER + timedelta(minutes=1))
    other = SweepRun.objects.create(wing="other", threshold=0.9)
    run_sweep.enqueue(other.pk)
    run_sweep_part.enqueue(10**9)  # a part of no run of these
    assert not worked_on(queued)


def test_the_command_resumes_in_the_background_as_the_page_does(queued):
    """`dedup_sweep --resume RUN --background` queued the run at every call, a worker on it or
    not: now as the page's Resume, refused while a worker has it, queued once it stalled."""
    with pytest.raises(CommandError, match="a worker has it, or it waits for one"):
        call_command("dedup_sweep", resume=queued.pk, background=True)
    assert DBTaskResult.objects.count() == 1
    taken(STUCK_AFTER + timedelta(minutes=1))
    out = StringIO()
    call_command("dedup_sweep", resume=queued.pk, background=True, stdout=out)
    assert out.getvalue().strip() == (
        f"sweep {queued.pk} queued to resume; `manage.py db_worker` runs it"
    )
    assert DBTaskResult.objects.count() == 2
