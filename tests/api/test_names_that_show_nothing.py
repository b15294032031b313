"""A name that shows nothing is blank (`empty_label`) wherever a blank name is: a wing, a room, a
drawer's name, an agent, an entity's name or alias, a kind. Besides spaces and the characters
a new name is given without, that is a variation selector (U+FE0F, U+E0100), a joiner, the
Braille blank (U+2800) and the Hangul fillers, alone or together: each made a wing, a name or an
entity that showed as nothing (the attack trial). A wing or room stored so before is still
written into and read by its name.

And a name that looks like another is that name: a joiner or a variation selector where it
changes nothing drawn, and the Braille blank at an end, are not part of it (`dedup.invisible`),
for writes, reads and keys alike (stored names were given that form by api 0003)."""

from __future__ import annotations

import urllib.parse

import pytest
from django.core.management import CommandError, call_command

from api.models import AgentKey
from dedup import services
from dedup.errors import EmptyLabel
from dedup.forms import WingForm
from dedup.validation import lookup_form
from palace.models import Drawer, Entity, Wing
from tests.conftest import agent_client

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


# Names that look like another are that name ----------------------------------------------------

LOOK_ALIKES = {
    "ZWJ at the end": "alpha\u200d",
    "ZWNJ inside": "al\u200cpha",
    "VS16 after a letter": "alpha\ufe0f",
    "VS17 after a letter": "alpha\U000e0100",
    "a Braille blank at the end": "alpha\u2800",
    "all of them": "\u2800\u200dal\u200cpha\ufe0f\u2800",
}
# Ending in a digit: a selector after it is kept in a keycap only (a review found "db-2\ufe0f").
DIGIT_LOOK_ALIKES = ["db-2\ufe0f", "db-2\ufe0e", "db-2\ufe00", "db-2#\ufe0f"]
look_alike = pytest.mark.parametrize("name", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())


@look_alike
def test_a_wing_that_looks_like_alpha_is_alpha(api, name):
    """Each was a wing of its own that showed as "alpha" (the attack trial)."""
    api.post(drawers_url("alpha"), {"content": "The first."}, format="json")
    response = api.post(drawers_url(name), {"content": "The second."}, format="json")
    assert response.status_code == 201
    assert response.json()["wing"] == "alpha"
    assert list(Wing.objects.values_list("name", flat=True)) == ["alpha"]


@look_alike
def test_a_key_for_alpha_reaches_the_wing_its_look_alike_names(user, dedup_settings, name):
    client = agent_client(user.username, wings=["alpha"])
    response = client.post(drawers_url(name), {"content": "Through the key."}, format="json")
    assert response.status_code == 201
    assert Drawer.objects.get().room.wing.name == "alpha"


@look_alike
def test_a_key_made_for_a_look_alike_is_a_key_for_alpha(name):
    key, _ = AgentKey.objects.issue(agent="scout", wings=[name], rights=["read", "write"])
    assert key.wings == ["alpha"]


@pytest.mark.parametrize("name", ["Redis\u200d", "Redis\u2800", "Redis\ufe0f", "\u200cRedis"])
def test_an_entity_sighted_with_a_look_alike_name_is_it_without_an_alias(name):
    """Convergence recorded "Redis\u200d" and "Redis⠀" as aliases of Redis."""
    redis = services.entity_resolve(name="Redis", kind="tool").entity
    found = services.entity_resolve(name=name, kind="tool")
    assert found.entity == redis
    assert found.rule == "exact"
    assert not redis.alias_set.exists()


KEPT = {
    "Persian ZWNJ": "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
    "Devanagari half form (ZWJ after a virama)": "\u0915\u094d\u200d\u0937",
    "a virama's ZWJ at the end": "\u0915\u094d\u200d",
    "Arabic joining form forced": "\u0628\u200d",
    "emoji ZWJ sequence": "team \U0001f469\u200d\U0001f4bb",
    "emoji presentation": "\u2764\ufe0f",
    "a keycap": "room 1\ufe0f\u20e3",
    "an emoji's selector after a CJK symbol": "\u3297\ufe0f",
    "Arabic joined beside Han": "\u0628\u200d\u6771",
    "conjoining jamo kept apart": "\u1100\u200c\u1161",
}


@pytest.mark.parametrize("name", KEPT.values(), ids=KEPT.keys())
def test_a_joiner_or_selector_that_changes_what_is_drawn_is_kept(name):
    written = services.drawer_write_in(wing=name, room=name, content="Kept as drawn.")
    assert (written.drawer.room.wing.name, written.drawer.room.name) == (name, name)
    assert services.entity_resolve(name=name, kind="other").entity.name == name


@pytest.mark.parametrize("name", DIGIT_LOOK_ALIKES)
def test_a_selector_after_a_digit_outside_a_keycap_is_not_part_of_the_name(name):
    assert lookup_form(name) == name[:-1]


# Composing can make a letter beside which a joiner changes nothing (the Ohm sign is Omega, the
# Kelvin sign K, the Angstrom sign A with a ring): a review found a key for "\u2126\u200d"
# writing into "Ω" and reading nothing there.
COMPOSED_INTO_PLAIN = ["\u2126\u200d", "\u212a\ufe0f", "\u212b\u200cb", "e\u200d\u0301x"]


@pytest.mark.parametrize("name", COMPOSED_INTO_PLAIN)
def test_a_name_is_its_own_form(name):
    form = lookup_form(name)
    assert lookup_form(form) == form


@pytest.mark.parametrize("name", COMPOSED_INTO_PLAIN[:1])
def test_a_key_for_a_name_composed_into_greek_reads_what_it_writes(user, dedup_settings, name):
    client = agent_client(user.username, wings=[name])
    written = client.post(drawers_url(name), {"content": "Ohm's law."}, format="json")
    assert written.status_code == 201
    assert client.get(f"/api/drawers/{written.json()['id']}").status_code == 200


# Beside a letter of Han, Hiragana, Katakana or Hangul a joiner or a selector changes nothing
# drawn: "東京\u200d" was a wing, and an alias, beside "東京". An ideographic variant (VS17 after
# 葛) was kept as drawn; it is folded now, a look-alike in any font without it (`dedup.invisible`).
CJK_LOOK_ALIKES = {
    "ZWJ after Han": ("\u6771\u4eac\u200d", "\u6771\u4eac"),
    "ZWNJ between Han": ("\u6771\u200c\u4eac", "\u6771\u4eac"),
    "VS16 after Han": ("\u6771\u4eac\ufe0f", "\u6771\u4eac"),
    "an ideographic variant": ("\u845b\U000e0100", "\u845b"),
    "a compatibility variant": ("\u6f22\ufe00", "\u6f22"),
    "ZWJ after Hiragana": ("\u3072\u3089\u200d", "\u3072\u3089"),
    "VS15 after Katakana": ("\u30ab\u30ca\ufe0e", "\u30ab\u30ca"),
    "ZWNJ between Hangul syllables": ("\ud55c\u200c\uad6d", "\ud55c\uad6d"),
    "ZWJ between Han and an emoji": ("\u6771\u200d\U0001f469", "\u6771\U0001f469"),
}
cjk_look_alike = pytest.mark.parametrize(
    ("name", "plain"), CJK_LOOK_ALIKES.values(), ids=CJK_LOOK_ALIKES.keys()
)


@cjk_look_alike
def test_a_joiner_or_selector_beside_a_cjk_letter_is_not_part_of_the_name(name, plain):
    assert lookup_form(name) == plain


@cjk_look_alike
def test_a_wing_that_looks_like_a_cjk_one_is_it(api, name, plain):
    api.post(drawers_url(plain), {"content": "The first."}, format="json")
    response = api.post(drawers_url(name), {"content": "The second."}, format="json")
    assert response.status_code == 201
    assert list(Wing.objects.values_list("name", flat=True)) == [plain]


@cjk_look_alike
def test_a_key_for_a_cjk_wing_reaches_its_look_alike(user, dedup_settings, name, plain):
    client = agent_client(user.username, wings=[plain])
    response = client.post(drawers_url(name), {"content": "Through the key."}, format="json")
    assert response.status_code == 201


@cjk_look_alike
def test_a_cjk_entity_sighted_with_a_look_alike_name_is_it_without_an_alias(name, plain):
    entity = services.entity_resolve(name=plain, kind="place").entity
    found = services.entity_resolve(name=name, kind="place")
    assert found.entity == entity
    assert not entity.alias_set.exists()


@cjk_look_alike
def test_a_cjk_alias_s_look_alike_is_that_alias(name, plain):
    entity = services.entity_resolve(name="Capital", kind="place").entity
    services.entity_alias_add(entity=entity, alias=plain)
    _, added = services.entity_alias_add(entity=entity, alias=name)
    assert added is False
    assert list(entity.alias_set.values_list("alias", flat=True)) == [plain]
