"""A checkpoint item's drawer id (an attacker's trial, of imports first): derived from the caller's
user number, the checkpoint's id and the item's index alone, all easily guessed, a key of another
wing could write a drawer under it first, and the whole checkpoint was refused (409
drawer_id_taken). It is keyed now (`dedup.derived_ids`); a replay still answers the first result
and stores nothing."""

import json
import uuid

import pytest

from api.mcp_server import writes
from dedup import services
from dedup.errors import EmptyLabel
from palace.models import Checkpoint, Drawer
from tests.api.mcp_support import ctx_of
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


# A checkpoint id that shows nothing is blank, as a name is: a Braille blank, a zero-width space,
# a variation selector alone (`clean_name`); the first and the last were stored as ids.
BLANK_IDS = {"Braille blank": "\u2800", "zero-width space": "\u200b", "VS16": "\ufe0f"}
blank_id = pytest.mark.parametrize("key", BLANK_IDS.values(), ids=BLANK_IDS.keys())


@blank_id
def test_a_checkpoint_id_that_shows_nothing_is_blank(user, dedup_settings, key):
    response = agent_client(user.username).post(
        "/api/checkpoints", {**BODY, "id": key}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "empty_label"
    assert response.json()["details"] == {"field": "id"}
    assert not Drawer.objects.exists()
    assert not Checkpoint.objects.exists()


@blank_id
def test_the_mcp_tool_refuses_it_alike(secret, key):
    answer = writes.write_checkpoint(ctx_of(secret), id=key, items=BODY["items"])
    assert answer.is_error
    body = json.loads(answer.content[0].text)
    assert (body["code"], body["details"]) == ("empty_label", {"field": "id"})
    assert not Checkpoint.objects.exists()


@blank_id
def test_the_service_refuses_it_alike(key):
    item = services.CheckpointItem(content="x", destination=services.Destination.GENERAL, agent="a")
    with pytest.raises(EmptyLabel, match="id must not be blank"):
        services.checkpoint_write(key=key, items=[item])
