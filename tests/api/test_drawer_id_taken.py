"""A client-chosen drawer id is unique across the store, so one used anywhere else is refused (409
drawer_id_taken); but a key that does not reach the room holding it learns nothing of where (an
attacker's trial: "already used in another room" told a key of one wing that the id existed in a
wing it does not reach). An id used in another room is refused in the very words of a deleted
drawer's id, with the id alone in the details. And an import's ids are no longer ones a key of
another wing can compute (to take one first) or meet (importing the same record into its own
wing): `dedup.imports.ids`."""

import uuid

import pytest

from dedup import imports, services
from tests.api.conftest import castellan
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db

URL = "/api/wings/notes/rooms/entries/drawers"
TEXT = "The release train leaves on Thursdays."


@pytest.fixture
def elsewhere(dedup_settings) -> str:
    """The id of a drawer in a wing the key below does not reach."""
    drawer_id = uuid.uuid4()
    services.drawer_write_in(
        wing="private", room="vault", content="The vault code is 4711.", drawer_id=drawer_id
    )
    return str(drawer_id)


@pytest.fixture
def deleted(dedup_settings) -> str:
    """The id of a drawer deleted, in the key's own wing."""
    written = services.drawer_write_in(wing="notes", room="old", content="Gone since.")
    services.drawer_delete(drawer=written.drawer)
    return str(written.drawer.uuid)


@pytest.fixture
def client(user, dedup_settings):
    return agent_client(user.username, wings=["notes"])


def test_an_id_used_in_an_unreached_wing_is_refused(client, elsewhere):
    response = client.post(URL, {"content": TEXT, "id": elsewhere}, format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "drawer_id_taken"


def test_it_is_refused_in_the_words_of_a_deleted_drawers_id(client, elsewhere, deleted):
    there = client.post(URL, {"content": TEXT, "id": elsewhere}, format="json").json()
    gone = client.post(URL, {"content": TEXT, "id": deleted}, format="json").json()
    assert there["error"] == gone["error"]


def test_the_refusal_holds_the_id_alone(client, elsewhere):
    body = client.post(URL, {"content": TEXT, "id": elsewhere}, format="json").json()
    assert body["details"] == {"drawer": elsewhere}


def test_the_refusal_does_not_say_the_id_is_in_another_room(client, elsewhere):
    body = client.post(URL, {"content": TEXT, "id": elsewhere}, format="json").json()
    assert "another room" not in body["error"]


def test_a_dry_run_refuses_it_in_the_same_words(client, elsewhere, deleted):
    dry = f"{URL}?dry_run=true"
    there = client.post(dry, {"content": TEXT, "id": elsewhere}, format="json").json()
    gone = client.post(dry, {"content": TEXT, "id": deleted}, format="json").json()
    assert there["error"] == gone["error"]


def test_other_content_under_an_id_of_this_room_is_said_so(client):
    """The key writes into that room: telling it the id is used there tells it nothing new."""
    drawer_id = str(uuid.uuid4())
    client.post(URL, {"content": TEXT, "id": drawer_id}, format="json")
    other = client.post(URL, {"content": "Another fact.", "id": drawer_id}, format="json")
    assert "this room" in other.json()["error"]


RECORD = {"type": "drawer", "id": "x1", "content": TEXT, "wing": "notes", "room": "entries"}


def test_a_key_of_another_wing_cannot_take_an_imports_id_first(client, dedup_settings):
    """It computed the id from the file (uuid5 of `castellan:x1`) and wrote there first: the
    import refused the record as malformed."""
    mallory = agent_client("mallory", wings=["attacker"])
    taken = str(uuid.uuid5(imports.IMPORT_NAMESPACE, "castellan:x1"))
    url = "/api/wings/attacker/rooms/r/drawers"
    assert mallory.post(url, {"content": "Mine.", "id": taken}, format="json").status_code == 201
    body = client.post("/api/imports", castellan(RECORD), format="json").json()
    summary = client.get(f"/api/imports/{body['id']}").json()["summary"]
    assert (summary["created"], summary["malformed"]) == (1, 0)


def test_an_import_does_not_tell_a_key_another_wing_imported_the_record(client, dedup_settings):
    """Refused (`drawer_id_taken`), the record told the key that a wing it does not reach holds
    it; stored, it tells nothing."""
    elsewhere = agent_client("mallory", wings=["private"])
    elsewhere.post("/api/imports", castellan({**RECORD, "wing": "private"}), format="json")
    body = client.post("/api/imports", castellan(RECORD), format="json").json()
    summary = client.get(f"/api/imports/{body['id']}").json()["summary"]
    assert (summary["created"], summary["malformed"]) == (1, 0)
