"""A checkpoint item's drawer id (an attacker's trial, of imports first): derived from the caller's
user number, the checkpoint's id and the item's index alone, all easily guessed, a key of another
wing could write a drawer under it first, and the whole checkpoint was refused (409
drawer_id_taken). It is keyed now (`dedup.derived_ids`); a replay still answers the first result
and stores nothing."""

import uuid

import pytest

from dedup import services
from palace.models import Drawer
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db

BODY = {
    "id": "session-1",
    "items": [{"content": "Deploys run on Tuesdays.", "destination": "general"}],
}


def unkeyed(user) -> str:
    """The id the checkpoint's first item was written under before ids were keyed."""
    return str(uuid.uuid5(services.CHECKPOINT_NAMESPACE, f"{user.pk}\x1fsession-1\x1f0"))


def test_an_id_taken_first_in_another_wing_does_not_refuse_the_checkpoint(user, dedup_settings):
    mallory = agent_client("mallory", wings=["attacker"])
    taken = {"content": "Mine.", "id": unkeyed(user)}
    mallory.post("/api/wings/attacker/rooms/r/drawers", taken, format="json")
    response = agent_client(user.username).post("/api/checkpoints", BODY, format="json")
    assert response.status_code == 201


def test_the_items_id_is_not_the_unkeyed_one(user, dedup_settings):
    body = agent_client(user.username).post("/api/checkpoints", BODY, format="json").json()
    assert body["drawers"][0]["drawer"] != unkeyed(user)


def test_a_replay_stores_nothing(user, dedup_settings):
    client = agent_client(user.username)
    first = client.post("/api/checkpoints", BODY, format="json").json()
    again = client.post("/api/checkpoints", BODY, format="json").json()
    assert again["drawers"] == first["drawers"]
    assert Drawer.objects.count() == 1
