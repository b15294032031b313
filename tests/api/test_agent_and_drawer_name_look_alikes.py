"""A write's agent and a drawer's name are held to the look-alike rule of wings and rooms
(`optional_written_name`): "scout\u200d" wrote as a second agent beside "scout", its diary
compared with its own entries only, and "notes\u200d" named a second drawer beside "notes". A
look-alike is given the form it looks like; rows stored before keep their agent and name, and a
named write still finds the drawer stored under its name."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from dedup import services
from dedup.errors import DrawerNameTaken, InvalidInput
from dedup.services import WriteMode
from palace.models import Drawer
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db

ENTRY = "Today I refactored the ingestion pipeline and the tests finally pass."
DRAWERS = "/api/wings/ops/rooms/notes/drawers"
AGENT_LOOK_ALIKES = ["scout\u200d", "sc\u200cout", "scout\ufe0f", "scout\u2800", "\u200bscout"]
NAME_LOOK_ALIKES = ["notes\u200d", "no\u200ctes", "notes\ufe0f", "notes\U000e0100"]


@pytest.mark.parametrize("agent", AGENT_LOOK_ALIKES)
def test_a_write_s_look_alike_agent_is_the_agent_it_looks_like(dedup_settings, agent):
    written = services.drawer_write_in(wing="ops", room="r", content=ENTRY, agent=agent)
    assert written.drawer.agent == "scout"


@pytest.mark.parametrize("agent", AGENT_LOOK_ALIKES)
def test_a_diary_entry_by_a_look_alike_is_compared_with_the_agent_s_own(dedup_settings, agent):
    first = services.drawer_write_in(
        wing="ops", room="diary", content=ENTRY, agent="scout", mode=WriteMode.DIARY
    )
    again = services.drawer_write_in(
        wing="ops", room="diary", content=ENTRY, agent=agent, mode=WriteMode.DIARY
    )
    assert again.created is False
    assert again.drawer == first.drawer


def test_a_key_writing_as_its_own_agent_spelled_alike_writes_as_itself(dedup_settings):
    """It was refused (403: writing as another agent needs write_as_any_agent)."""
    client = agent_client("scout")
    body = {"content": ENTRY, "agent": "scout\u200d"}
    response = client.post(DRAWERS, body, format="json")
    assert response.status_code == 201
    assert response.json()["agent"] == "scout"


def test_a_key_writing_as_another_agent_is_still_refused(dedup_settings):
    client = agent_client("scout")
    response = client.post(DRAWERS, {"content": ENTRY, "agent": "ranger"}, format="json")
    assert response.status_code == 403
    assert not Drawer.objects.exists()


def test_who_writes_as_any_agent_writes_a_look_alike_as_the_agent(dedup_settings, grant):
    user = grant(get_user_model().objects.create_user("curie"), "write_as_any_agent")
    body = {"content": ENTRY, "agent": "scout\ufe0f"}
    response = agent_client(user.username).post(DRAWERS, body, format="json")
    assert response.status_code == 201
    assert Drawer.objects.get().agent == "scout"


@pytest.mark.parametrize("name", NAME_LOOK_ALIKES)
def test_a_drawer_named_as_a_look_alike_is_the_named_one(api, name):
    first = api.post(DRAWERS, {"content": ENTRY, "name": "notes"}, format="json").json()
    again = api.post(DRAWERS, {"content": ENTRY, "name": name}, format="json")
    assert again.status_code == 200
    assert again.json()["id"] == first["id"]


@pytest.mark.parametrize("name", NAME_LOOK_ALIKES)
def test_a_look_alike_name_with_other_content_is_taken(api, name):
    api.post(DRAWERS, {"content": ENTRY, "name": "notes"}, format="json")
    response = api.post(DRAWERS, {"content": "Something else.", "name": name}, format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "drawer_name_taken"
    assert Drawer.objects.count() == 1


def test_a_new_drawer_is_given_the_name_s_form(api):
    response = api.post(DRAWERS, {"content": ENTRY, "name": "notes\u200d"}, format="json")
    assert response.status_code == 201
    assert Drawer.objects.get().name == "notes"


def stored_before(name: str, agent: str) -> Drawer:
    """A drawer as the write path stored it before: its name and agent as written."""
    drawer = services.drawer_write_in(wing="ops", room="notes", content=ENTRY).drawer
    Drawer.objects.filter(pk=drawer.pk).update(name=name, agent=agent)
    return drawer


def test_a_drawer_stored_under_a_look_alike_name_is_still_found_by_it(dedup_settings):
    drawer = stored_before("notes\u200d", "scout\u200d")
    again = services.drawer_write_in(wing="ops", room="notes", content=ENTRY, name="notes\u200d")
    assert again.created is False
    assert again.drawer == drawer
    with pytest.raises(DrawerNameTaken, match="notes\\\\u200d"):
        services.drawer_write_in(wing="ops", room="notes", content="Other.", name="notes\u200d")
    drawer.refresh_from_db()
    assert (drawer.name, drawer.agent) == ("notes\u200d", "scout\u200d")


def test_the_name_s_form_is_found_before_a_twin_stored_as_given(dedup_settings):
    twin = stored_before("notes\u200d", "")
    plain = services.drawer_write_in(wing="ops", room="notes", content="Plain.", name="notes")
    again = services.drawer_write_in(wing="ops", room="notes", content="Plain.", name="notes\u200d")
    assert again.drawer == plain.drawer
    assert again.drawer != twin


def test_a_name_longer_than_its_limit_once_composed_is_refused_not_stored(dedup_settings):
    """U+0958 composes to two characters: 150 of them are 300, past the column's 200."""
    with pytest.raises(InvalidInput, match="at most 200 characters"):
        services.drawer_write_in(wing="ops", room="r", content=ENTRY, name="\u0958" * 150)
    assert not Drawer.objects.exists()
