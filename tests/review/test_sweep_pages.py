"""A sweep's page says what stands: an application reversed since is marked so, a Reverse with
nothing to undo says so with no button, Resume is offered only for a run no worker is on, the
flash is plain text, and the what-if table starts at the run's own threshold."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.html import escape
from django_tasks_db.models import DBTaskResult

from dedup import services as write
from review.models import SweepRun
from review.services import sweeps as sweep_services
from tests.review.test_sweeps import FACT, legacy, run_sweep
from tests.review.test_sweeps import palace as legacy_palace  # noqa: F401

pytestmark = pytest.mark.django_db
DATABASE_TASKS = {
    "default": {"BACKEND": "django_tasks_db.DatabaseBackend", "ENQUEUE_ON_COMMIT": False}
}


def test_an_application_reversed_since_says_so(as_curator, curator, legacy_palace):  # noqa: F811
    run = run_sweep(wing="ops")
    sweep_services.apply(run, threshold=0.9, actor=curator)
    before = as_curator.get(f"/sweeps/{run.pk}/").content.decode()
    assert "Reversed" not in before
    sweep_services.reverse(run, actor=curator)
    page = as_curator.get(f"/sweeps/{run.pk}/").content.decode()
    assert "Reversed" in page
    assert "none of it is in force" in page


def test_a_reversed_application_is_told_in_plain_text_not_struck_through(
    as_curator,
    curator,
    legacy_palace,  # noqa: F811
):
    """The curator's trial: its explanation was struck through in red on pink (the diff's
    deleted text), hard to read. It is marked by words, and shown as any text is."""
    run = run_sweep(wing="ops")
    applied = sweep_services.apply(run, threshold=0.9, actor=curator)
    sweep_services.reverse(run, actor=curator)
    page = as_curator.get(f"/sweeps/{run.pk}/").content.decode()
    (item,) = page.split('<ul class="applications">')[1].split("</ul>")[0].split("<li")[1:]
    assert "<del" not in item
    assert 'class="reversed"' in item
    assert "<strong>Reversed</strong>" in item
    assert escape(applied.explained) in item


def test_reversing_a_run_never_applied_says_there_is_nothing_to_reverse(
    as_curator,
    legacy_palace,  # noqa: F811
):
    run = run_sweep(wing="ops")
    body = as_curator.post(f"/sweeps/{run.pk}/", {"action": "reverse"}).content.decode()
    assert "Nothing to reverse" in body
    assert "Reverse sweep #" not in body
    assert 'name="confirm"' not in body


def test_reversing_an_applied_run_is_still_confirmed(as_curator, curator, legacy_palace):  # noqa: F811
    run = run_sweep(wing="ops")
    sweep_services.apply(run, threshold=0.9, actor=curator)
    body = as_curator.post(f"/sweeps/{run.pk}/", {"action": "reverse"}).content.decode()
    assert f"Reverse sweep #{run.pk}</button>" in body


def test_a_freshly_queued_run_offers_no_resume(as_curator, settings, legacy_palace):  # noqa: F811
    settings.TASKS = DATABASE_TASKS
    response = as_curator.post("/sweeps/", {"wing": "ops"})
    run = SweepRun.objects.get()
    assert run.status == "queued"
    page = as_curator.get(response["Location"]).content.decode()
    assert "Resume sweep" not in page
    assert "`" not in page  # the flash names the worker in plain text
    assert "manage.py db_worker" in page


def test_a_run_whose_worker_died_offers_resume(as_curator, settings, legacy_palace):  # noqa: F811
    settings.TASKS = DATABASE_TASKS
    as_curator.post("/sweeps/", {"wing": "ops"})
    run = SweepRun.objects.get()
    task = DBTaskResult.objects.get()
    long_ago = timezone.now() - timedelta(minutes=11)
    DBTaskResult.objects.filter(pk=task.pk).update(status="RUNNING", started_at=long_ago)
    SweepRun.objects.filter(pk=run.pk).update(status=SweepRun.Status.RUNNING)
    assert "Resume sweep" in as_curator.get(f"/sweeps/{run.pk}/").content.decode()
    DBTaskResult.objects.filter(pk=task.pk).update(started_at=timezone.now())  # working on it
    assert "Resume sweep" not in as_curator.get(f"/sweeps/{run.pk}/").content.decode()


def test_the_what_if_table_starts_at_the_runs_threshold(as_curator, dedup_settings):
    room = write.room_get_or_create(wing="old", room="notes")
    legacy(room, FACT)
    legacy(room, FACT.replace("is refreshed from", "gets reloaded off"))
    run = run_sweep(wing="old", threshold=0.8)
    (score,) = run.proposals.values_list("score", flat=True)
    assert 0.8 <= score < 0.9
    page = as_curator.get(f"/sweeps/{run.pk}/").content.decode()
    table = page.split('aria-label="What applying would do"')[1].split("</table>")[0]
    assert "<td>0.80</td><td>1</td>" in table
    assert "<td>0.95</td><td>0</td>" in table


def test_a_refused_start_keeps_what_was_typed(as_curator):
    response = as_curator.post("/sweeps/", {"wing": "ops", "room": "dev", "threshold": "2"})
    page = response.content.decode()
    assert response.status_code == 400
    assert 'value="2"' in page
    assert 'name="wing" size="10" value="ops"' in page
    assert "threshold" in page.split('class="messages"')[1][:300]
