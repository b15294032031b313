"""A sweep started twice, or the same apply sent twice (a double click whose page script did not
run, a client's retry), is stored once: the server refuses the repeat, even when both arrive at
once. Starting is refused while a run of the same scope is queued or running (a constraint of
the database); an apply that would change nothing is refused and records nothing."""

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from dedup import services as write
from dedup.errors import Conflict
from palace.models import AuditEntry
from review.models import SweepRun
from review.services import sweeps as sweep_services
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
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=curator).key}")
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
