"""api 0003: wings and rooms stored under a name that looks like another ("alpha\u200d",
"al\u200cpha", "alpha\ufe0f", "alpha\u2800": each looked like "alpha", and a key for "alpha" did
not reach it) get the name a write gives them now, as api 0002 gave composition: one taken
already is left apart, listed, never merged; keys follow; names the rule leaves blank stay."""

from __future__ import annotations

import importlib
import itertools

import pytest
from django.core.management import call_command

from api.models import AgentKey
from dedup import services
from dedup.validation import label_form
from palace.models import AuditEntry, Drawer, Room, Wing
from tests.api.test_migration_cjk_look_alikes import cjk_joined
from tests.api.test_migrations import SAMPLES, made_before, migrate, names
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("api", "0002_composed_place_names")
MIGRATION = importlib.import_module("api.migrations.0003_look_alike_place_names")
PERSIAN = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # a ZWNJ the word needs


def test_look_alikes_get_the_name_a_write_gives_and_keys_follow(dedup_settings):
    migrate(BEFORE)
    alpha = made_before("alpha\u200d", "r\ufe0f")
    beta = made_before("be\u200cta", "notes\u2800")
    drawer = services.drawer_write(room=alpha, content="Filed under a joiner.").drawer
    client = agent_client("scout", wings=["placeholder"])
    AgentKey.objects.update(wings=["alpha\u200d"])  # as a key was made for the look-alike

    migrate()

    assert names(Wing) == ["alpha", "beta"]
    assert names(Room) == ["r", "notes"]
    assert AgentKey.objects.get().wings == ["alpha"]
    response = client.post("/api/wings/alpha/rooms/r/drawers", {"content": "x"}, format="json")
    assert response.status_code == 201
    assert Drawer.objects.get(uuid=response.json()["id"]).room == alpha
    assert client.get(f"/api/drawers/{drawer.uuid}").status_code == 200
    written = services.drawer_write_in(wing="be\u200cta", room="notes", content="y")
    assert written.drawer.room == beta  # the old form finds the renamed one
    renames = AuditEntry.objects.filter(data__migration=MIGRATION.MIGRATION).order_by("pk")
    assert [(e.action, e.before, e.after) for e in renames] == [
        ("wing.rename", {"name": "alpha\u200d"}, {"name": "alpha"}),
        ("wing.rename", {"name": "be\u200cta"}, {"name": "beta"}),
        ("room.rename", {"wing": "alpha", "name": "r\ufe0f"}, {"wing": "alpha", "name": "r"}),
        ("room.rename", {"wing": "beta", "name": "notes\u2800"}, {"wing": "beta", "name": "notes"}),
    ]  # fmt: skip


def test_a_look_alike_of_a_stored_name_stays_apart_listed(dedup_settings, capsys):
    """The attack's wings beside "alpha": none renamed onto it, none merged; a key made for
    "alpha" still does not reach them, one made for a twin keeps it."""
    migrate(BEFORE)
    made_before("alpha", "r")
    twins = [made_before(name, "r") for name in ("alpha\u200d", "al\u200cpha", "alpha\ufe0f")]
    twin_key = agent_client("twin", wings=["placeholder"])
    AgentKey.objects.update(wings=["alpha\ufe0f"])
    capsys.readouterr()

    migrate()

    printed = capsys.readouterr().out
    assert (
        f"The wing {'alpha' + chr(0x200D)!a} stays apart: 'alpha' is another wing's name."
        in printed
    )
    assert names(Wing) == ["alpha", "alpha\u200d", "al\u200cpha", "alpha\ufe0f"]
    assert AgentKey.objects.get().wings == ["alpha\ufe0f"]
    assert [w["name"] for w in twin_key.get("/api/wings").json()] == ["alpha\ufe0f"]
    call_command("name_twins")
    listed = capsys.readouterr().out.splitlines()
    stored = ", ".join(f"{room.wing.name!a} (id {room.wing_id})" for room in twins)
    assert listed[0].startswith("wing 'alpha': 'alpha' (id ")
    assert listed[0].endswith(stored)


def test_names_the_rule_keeps_or_leaves_blank_stay(dedup_settings):
    """A joiner a script or an emoji needs is kept; a name the rule leaves blank to the eye (a
    variation selector alone, the Braille blank alone) is not renamed: written into and read by
    its name as before."""
    migrate(BEFORE)
    kept = [PERSIAN, "\u2764\ufe0f", "\U0001f469\u200d\U0001f4bb", "\u0915\u094d\u200d\u0937"]
    blank = ["\ufe0f", "\u2800", "\U000e0100"]
    for name in [*kept, *blank]:
        made_before(name, "r")
    migrate()
    assert names(Wing) == [*kept, *blank]
    written = services.drawer_write_in(wing="\ufe0f", room="r", content="Still reachable.")
    assert written.drawer.room.wing.name == "\ufe0f"


CONTEXTS = [("", ""), ("a", "b"), (" e", ""), ("\u0915\u094d", ""), ("\U0001f44d", "\u2764")]


@pytest.mark.django_db(transaction=False)
def test_the_frozen_rule_was_the_label_form_of_its_day():
    """Today's `label_form` is api 0004's, held to it in test_migration_cjk_look_alikes; 0003's
    is history, and differs only where 0004 renamed: a joiner or a selector beside a CJK
    letter (`cjk_joined`)."""
    for sample, (before, after) in itertools.product(SAMPLES, CONTEXTS):
        text = f"{before}{sample}{after}"
        if not cjk_joined(text):
            assert MIGRATION.label_form(text) == label_form(text), ascii(text)
