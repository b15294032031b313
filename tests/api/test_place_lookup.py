"""One name rule for wings and rooms: a name a client gives is found in its composed form
(`dedup.validation.lookup_form`), by writes, reads, dry runs, searches, exports and keys alike.
An agent's trial found a key made for "beta\\u200b" writing into beta (the key was judged on the
name as typed, the write on the name composed), and reads, dry runs and searches naming
"cafe\\u0301" missing the wing "café" the same name wrote into."""

from __future__ import annotations

import unicodedata

import pytest

from api.mcp_server import reads
from api.models import RIGHTS, AgentKey
from dedup import services
from palace.models import Drawer, Wing
from review.services import sweeps
from tests.api.mcp_support import ctx_of
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db

NFD = unicodedata.normalize("NFD", "café")
NFD_ROOM = unicodedata.normalize("NFD", "réunion")


@pytest.fixture
def stored(dedup_settings) -> Drawer:
    return services.drawer_write_in(
        wing="café", room="réunion", content="Backups run nightly at two."
    ).drawer


def drawers_url(wing: str, room: str) -> str:
    return f"/api/wings/{wing}/rooms/{room}/drawers"


# A key names the wings its writes land in -------------------------------------------------------


def test_a_key_made_for_a_name_with_an_invisible_space_names_the_wing_without_it(dedup_settings):
    key, _ = AgentKey.objects.issue(agent="z", wings=["beta\u200b"], rights=RIGHTS)
    assert key.wings == ["beta"]


def test_a_key_made_for_a_decomposed_name_names_the_composed_wing(dedup_settings):
    key, _ = AgentKey.objects.issue(agent="z", wings=[NFD], rights=RIGHTS)
    assert key.wings == ["café"]


def test_a_key_of_one_wing_cannot_write_into_another_named_with_an_invisible_space(
    dedup_settings,
):
    Wing.objects.create(name="alpha")
    client = agent_client("z", wings=("beta",))
    response = client.post(drawers_url("alpha\u200b", "r"), {"content": "x"}, format="json")
    assert response.status_code == 403
    assert response.json()["code"] == "out_of_scope"


def test_a_key_reaches_its_wing_named_decomposed(stored):
    client = agent_client("z", wings=("café",))
    response = client.get(drawers_url(NFD, NFD_ROOM))
    assert response.status_code == 200
    assert [d["id"] for d in response.json()["results"]] == [str(stored.uuid)]


# Reads, dry runs, searches and exports find what the same name wrote ---------------------------


def test_a_wing_named_decomposed_is_found(api, stored):
    response = api.get(f"/api/wings/{NFD}")
    assert response.status_code == 200
    assert response.json()["name"] == "café"


def test_a_room_named_decomposed_lists_its_drawers(api, stored):
    response = api.get(drawers_url(NFD, NFD_ROOM))
    assert [d["id"] for d in response.json()["results"]] == [str(stored.uuid)]


def test_a_dry_run_naming_the_wing_decomposed_finds_the_exact_copy(api, stored):
    response = api.post(
        drawers_url(NFD, NFD_ROOM) + "?dry_run=true", {"content": stored.content}, format="json"
    )
    assert response.json()["existing"]["id"] == str(stored.uuid)


def test_a_dry_run_says_what_the_write_then_does(api, stored):
    checked = api.post(
        drawers_url(NFD, NFD_ROOM) + "?dry_run=true", {"content": stored.content}, format="json"
    ).json()
    written = api.post(drawers_url(NFD, NFD_ROOM), {"content": stored.content}, format="json")
    assert written.json()["created"] is False
    assert checked["would_store"] is False


def test_a_search_in_a_wing_named_decomposed_finds_its_drawers(api, stored):
    hits = api.get("/api/search", {"q": "backups nightly", "wing": NFD, "room": NFD_ROOM})
    assert [hit["drawer"]["id"] for hit in hits.json()["results"]] == [str(stored.uuid)]


def test_an_export_of_a_wing_named_decomposed_exports_it(api, stored):
    response = api.get("/api/export", {"wing": NFD})
    assert response.status_code == 200
    assert stored.content in b"".join(response.streaming_content).decode()


def test_mcp_lists_the_rooms_of_a_wing_named_decomposed(stored):
    _, secret = AgentKey.objects.issue(agent="m", wings=("café",), rights=RIGHTS)
    ctx = ctx_of(secret)
    answer = reads.list_rooms(ctx, wing=NFD)
    assert [room["name"] for room in answer["rooms"]] == ["réunion"]


def test_a_sweep_of_a_wing_and_room_named_decomposed_sweeps_them(stored):
    run = sweeps.start(wing=NFD, room=NFD_ROOM, threshold=0.9)
    assert (run.wing, run.room) == ("café", "réunion")
