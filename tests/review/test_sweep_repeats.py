"""A sweep started twice, or the same apply sent twice (a double click whose page script did not
run, a client's retry), is stored once: the server refuses the repeat, even when both arrive at
once. Starting is refused while a run of the same scope is queued or running (a constraint of
the database); an apply that would change nothing is refused and records nothing."""

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from dedup import services as write
from dedup.errors import Conflict
from palace.models import AuditEntry
from review.models import SweepRun
from review.services import sweep_parts
from review.services import sweeps as sweep_services
from review.tasks import run_sweep
from tests.conftest import person_client
from tests.races import race, race_codes
from tests.review.sweep_data import legacy

pytestmark = pytest.mark.django_db
FACT = "Backups run nightly at two in the morning and are kept for thirty days on the NAS."
on_postgres = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL"
)


@pytest.fixture
def room(dedup_settings):
    room = write.room_get_or_create(wing="ops", room="runbooks")
    for text in (FACT, FACT, FACT.replace("nightly", "nigthly")):
        legacy(room, text)
    return room


def start(**scope):
    return sweep_services.start(**{"wing": "ops", "room": "runbooks", "threshold": 0.9, **scope})


def test_a_second_start_of_a_scope_under_way_is_refused(room):
    start()
    with pytest.raises(Conflict, match="being swept already") as refused:
        start()
    assert refused.value.code == "sweep_under_way"


def test_the_refusal_names_the_run_under_way(room):
    first = start()
    with pytest.raises(Conflict) as refused:
        start(threshold=0.95)
    assert refused.value.details == {"run": first.pk}


def test_a_refused_start_stores_no_run(room):
    start()
    with pytest.raises(Conflict):
        start()
    assert SweepRun.objects.count() == 1


@pytest.mark.parametrize("status", [SweepRun.Status.DONE, SweepRun.Status.FAILED])
def test_a_scope_is_swept_again_once_its_run_has_ended(room, status):
    SweepRun.objects.filter(pk=start().pk).update(status=status)
    assert start().pk


@pytest.mark.parametrize(
    "scope", [{"room": ""}, {"wing": "", "room": ""}, {"wing": "", "room": "", "entities": True}]
)
def test_other_scopes_are_swept_meanwhile(room, scope):
    start()
    assert start(**scope).pk


def test_the_api_answers_a_repeated_start_409_with_the_run(room, curator):
    first = start()
    client = person_client(curator)
    response = client.post("/api/sweeps", {"wing": "ops", "room": "runbooks"}, format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "sweep_under_way"
    assert response.json()["details"] == {"run": first.pk}


def test_the_console_sends_a_repeated_start_to_the_run_under_way(room, client, curator):
    first = start()
    client.force_login(curator)
    response = client.post("/sweeps/", {"wing": "ops", "room": "runbooks", "threshold": "0.9"})
    assert response["Location"] == f"/sweeps/{first.pk}/"
    assert "being swept already" in client.get(response["Location"]).content.decode()


def test_the_console_answers_a_repeated_apply_with_its_reason(room, client, curator):
    run = sweep_services.execute(start())
    client.force_login(curator)
    apply = {"action": "apply", "threshold": "0.9", "confirm": "1"}
    client.post(f"/sweeps/{run.pk}/", apply)
    page = client.post(f"/sweeps/{run.pk}/", apply, follow=True).content.decode()
    assert "Nothing to apply" in page
    assert len(SweepRun.objects.get(pk=run.pk).applications) == 1


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_two_starts_at_once_make_one_run(room):
    codes = race(start, start)
    assert sorted(c.code if isinstance(c, Conflict) else "ok" for c in codes) == [
        "ok",
        "sweep_under_way",
    ]
    assert SweepRun.objects.count() == 1


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_the_same_apply_sent_twice_at_once_is_recorded_once(room, curator):
    run = sweep_services.execute(start())

    def apply():
        return sweep_services.apply(run, threshold=0.9, actor=curator)

    assert sorted(race_codes(apply, apply)) == ["nothing_to_apply", "ok"]
    assert AuditEntry.objects.filter(action="sweep.apply").count() == 1


@pytest.mark.parametrize("scope", [{"wing": "ops"}, {"wing": "ops", "room": "dev"}])
def test_an_entity_sweep_naming_a_wing_is_refused_not_taken_for_every_entity(room, curator, scope):
    client = person_client(curator)
    response = client.post("/api/sweeps", {"entities": True, **scope}, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "invalid")
    assert "entities belong to no wing" in response.json()["error"]
    assert not SweepRun.objects.exists()


def test_a_wing_of_spaces_is_refused_not_taken_for_the_whole_palace(room, curator):
    client = person_client(curator)
    response = client.post("/api/sweeps", {"wing": "  "}, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "empty_label")
    assert not SweepRun.objects.exists()


@pytest.fixture
def failed_beside_queued(room):
    """A run of the scope that failed, and another started since (queued)."""
    failed = start()
    SweepRun.objects.filter(pk=failed.pk).update(status=SweepRun.Status.FAILED)
    return failed, start()


def test_resuming_a_failed_run_while_another_is_under_way_is_refused(failed_beside_queued):
    failed, queued = failed_beside_queued
    with pytest.raises(Conflict) as refused:
        sweep_parts.resume(failed)
    assert (refused.value.code, refused.value.details) == ("sweep_under_way", {"run": queued.pk})


def test_the_command_says_so_rather_than_crash(failed_beside_queued):
    failed, queued = failed_beside_queued
    with pytest.raises(CommandError, match=f"by sweep {queued.pk} \\(queued\\)"):
        call_command("dedup_sweep", resume=failed.pk, no_progress=True)


def test_the_task_ends_saying_so(failed_beside_queued):
    failed, _ = failed_beside_queued
    result = run_sweep.enqueue(failed.pk)  # the immediate backend runs it here
    assert result.return_value == {"parts": 0, "refused": "sweep_under_way"}


@pytest.fixture
def stuck(room):
    """A run a worker stopped working on, left running: it holds its scope."""
    run = start()
    SweepRun.objects.filter(pk=run.pk).update(status=SweepRun.Status.RUNNING)
    return run


def test_the_api_resumes_a_stuck_run_which_then_finishes(stuck, curator):
    client = person_client(curator)
    response = client.post(f"/api/sweeps/{stuck.pk}/resume")
    assert response.status_code == 202
    assert SweepRun.objects.get(pk=stuck.pk).status == SweepRun.Status.DONE


def test_a_finished_run_is_not_resumed(stuck, curator):
    SweepRun.objects.filter(pk=stuck.pk).update(status=SweepRun.Status.DONE)
    client = person_client(curator)
    response = client.post(f"/api/sweeps/{stuck.pk}/resume")
    assert (response.status_code, response.json()["code"]) == (409, "run_done")


def test_the_console_resumes_a_stuck_run(stuck, client, curator):
    client.force_login(curator)
    assert "Resume sweep" in client.get(f"/sweeps/{stuck.pk}/").content.decode()
    client.post(f"/sweeps/{stuck.pk}/", {"action": "resume"})
    assert SweepRun.objects.get(pk=stuck.pk).status == SweepRun.Status.DONE


def test_a_viewer_does_not_resume(stuck, viewer):
    client = person_client(viewer)
    assert client.post(f"/api/sweeps/{stuck.pk}/resume").status_code == 403
    assert SweepRun.objects.get(pk=stuck.pk).status == SweepRun.Status.RUNNING


def test_the_api_refuses_to_resume_a_failed_run_while_another_is_under_way(
    failed_beside_queued, curator
):
    failed, queued = failed_beside_queued
    response = person_client(curator).post(f"/api/sweeps/{failed.pk}/resume")
    assert (response.status_code, response.json()["details"]) == (409, {"run": queued.pk})
