"""A name that shows nothing is blank (`empty_label`) wherever a blank name is: a wing, a room, a
drawer's name, an agent, an entity's name or alias, a kind. Besides spaces and the characters
a new name is given without, that is a variation selector (U+FE0F, U+E0100), a joiner, the
Braille blank (U+2800) and the Hangul fillers, alone or together: each made a wing, a name or an
entity that showed as nothing (the attack trial). A wing or room stored so before is still
written into and read by its name."""

from __future__ import annotations

import urllib.parse

import pytest
from django.core.management import CommandError, call_command

from dedup import services
from dedup.errors import EmptyLabel
from dedup.forms import WingForm
from palace.models import Drawer, Entity, Wing

pytestmark = pytest.mark.django_db

BLANK = {
    "VS16": "\ufe0f",
    "VS17": "\U000e0100",
    "Braille blank": "\u2800",
    "ZWJ": "\u200d",
    "ZWNJ and VS15": "\u200c\ufe0e",
    "Hangul filler and VS16": "\u3164\ufe0f",
    "Braille blank and spaces": " \u2800 \u2800 ",
}
blank = pytest.mark.parametrize("name", BLANK.values(), ids=BLANK.keys())


def drawers_url(wing: str, room: str = "r") -> str:
    quoted = (urllib.parse.quote(part, safe="") for part in (wing, room))
    return "/api/wings/{}/rooms/{}/drawers".format(*quoted)


def refused_blank(response, field: str) -> None:
    assert response.status_code == 400
    assert response.json()["code"] == "empty_label"
    assert response.json()["details"]["field"] == field


@blank
def test_a_wing_that_shows_nothing_is_blank(api, name):
    refused_blank(api.post(drawers_url(name), {"content": "Unseen."}, format="json"), "wing")
    assert not Wing.objects.exists()


@blank
def test_a_room_that_shows_nothing_is_blank(api, name):
    refused_blank(api.post(drawers_url("notes", name), {"content": "x"}, format="json"), "room")
    assert not Drawer.objects.exists()


@blank
def test_a_drawers_name_that_shows_nothing_is_blank(api, name):
    body = {"content": "Named as nothing.", "name": name}
    refused_blank(api.post(drawers_url("notes"), body, format="json"), "name")
    assert not Drawer.objects.exists()


@blank
def test_an_agent_that_shows_nothing_is_blank(name):
    with pytest.raises(EmptyLabel, match="agent must not be blank"):
        services.drawer_write_in(wing="notes", room="r", content="By no one.", agent=name)
    assert not Drawer.objects.exists()


@blank
def test_a_mention_naming_nothing_is_blank(api, name):
    drawer = services.drawer_write_in(wing="notes", room="r", content="Redis is the cache.")
    url = f"/api/drawers/{drawer.drawer.uuid}/mentions"
    refused_blank(api.post(url, {"name": name, "kind": "tool"}, format="json"), "name")
    assert not Entity.objects.exists()


@blank
def test_an_alias_that_shows_nothing_is_blank(name):
    entity = services.entity_resolve(name="Redis", kind="tool").entity
    with pytest.raises(EmptyLabel, match="alias must not be blank"):
        services.entity_alias_add(entity=entity, alias=name)
    assert not entity.alias_set.exists()


@pytest.mark.parametrize("kind", ["\ufe0f", "\u2800", "\u200d"])
def test_a_kind_that_shows_nothing_is_blank_not_malformed(api, kind):
    """It was `invalid` (not a short word), where a kind of spaces is `empty_label`."""
    body = {"content": "Kind of nothing.", "kind": kind}
    refused_blank(api.post(drawers_url("notes"), body, format="json"), "kind")


def test_a_wing_stored_so_before_is_still_written_into_and_read(api):
    Wing.objects.create(name="\ufe0f")
    written = api.post(drawers_url("\ufe0f"), {"content": "Still reachable."}, format="json")
    assert written.status_code == 201
    assert written.json()["wing"] == "\ufe0f"
    listed = api.get(drawers_url("\ufe0f"))
    assert [d["content"] for d in listed.json()["results"]] == ["Still reachable."]


def test_the_admin_refuses_a_wing_that_shows_nothing():
    form = WingForm(data={"name": "\u2800"})
    assert not form.is_valid()
    assert form.errors["name"] == ["wing must not be blank."]


def test_an_agent_key_for_an_agent_that_shows_nothing_is_refused():
    """The user model takes a Hangul filler for a letter."""
    with pytest.raises(CommandError, match="agent must not be blank"):
        call_command("agent_key", "create", "\u3164", "--wings", "notes")
