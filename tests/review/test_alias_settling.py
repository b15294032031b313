"""An alias decided with the pairs it settles is one service (`decide_settling`), the console's
and the API's: only pairs the alias settles are dismissed with it, in its batch."""

import pytest

from dedup import services as write
from palace.models import AuditEntry, EntityLink
from tests.conftest import person_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def katerinas(dedup_settings):
    """Katerina is one edit from both Katarina and Katerino: the alias of Katerino into
    Katarina settles Katerina-Katerino, and leaves Katerina-Katarina to ask."""
    for name in ("Katarina", "Katerino", "Katerina"):
        write.entity_resolve(name=name, kind="person")
    return (
        EntityLink.objects.get(newer__name="Katerino", older__name="Katarina"),
        EntityLink.objects.get(newer__name="Katerina", older__name="Katerino"),
        EntityLink.objects.get(newer__name="Katerina", older__name="Katarina"),
    )


def test_the_api_dismisses_what_the_alias_settles_and_nothing_else(katerinas, curator):
    first, redundant, kept = katerinas
    response = person_client(curator).post(
        f"/api/review/items/e{first.pk}/decisions",
        {"action": "add_alias", "also_dismiss": [f"e{redundant.pk}", f"e{kept.pk}", "d999"]},
        format="json",
    )
    assert response.status_code == 201
    statuses = dict(EntityLink.objects.values_list("pk", "status"))
    assert statuses == {first.pk: "aliased", redundant.pk: "dismissed", kept.pk: "open"}
    batches = {str(batch) for batch in AuditEntry.objects.values_list("batch", flat=True)}
    assert batches == {response.json()["batch"]}


def test_another_decision_dismisses_nothing_with_it(katerinas, curator):
    first, redundant, _ = katerinas
    response = person_client(curator).post(
        f"/api/review/items/e{first.pk}/decisions",
        {"action": "dismiss", "also_dismiss": [f"e{redundant.pk}"]},
        format="json",
    )
    assert response.status_code == 201
    assert EntityLink.objects.get(pk=redundant.pk).status == "open"


@pytest.mark.parametrize("also", ["e1", [5], ["e1"] * 1001])
def test_a_bad_list_is_refused_and_decides_nothing(katerinas, curator, also):
    first, _, _ = katerinas
    response = person_client(curator).post(
        f"/api/review/items/e{first.pk}/decisions",
        {"action": "add_alias", "also_dismiss": also},
        format="json",
    )
    assert (response.status_code, response.json()["code"]) == (400, "invalid")
    assert not AuditEntry.objects.exists()


@pytest.mark.parametrize("action", ["add_alias", "dismiss"])
@pytest.mark.parametrize("malformed", ["zz", "d-1", "e0", "e1x"])
def test_a_malformed_id_to_dismiss_is_refused_and_decides_nothing(
    katerinas, curator, action, malformed
):
    """It was dropped unread (201), the item decided."""
    first, redundant, _ = katerinas
    response = person_client(curator).post(
        f"/api/review/items/e{first.pk}/decisions",
        {"action": action, "also_dismiss": [f"e{redundant.pk}", malformed]},
        format="json",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_id"
    assert body["details"] == {"field": "also_dismiss", "item": malformed}
    assert not AuditEntry.objects.exists()
    assert set(EntityLink.objects.values_list("status", flat=True)) == {"open"}
