"""api 0004: wings and rooms stored under a name that looks like another beside a CJK letter
("東京\u200d", "東\u200c京", "東京\ufe0f", "葛\U000e0100": each looked like the name without
it, and a key for that name did not reach it) get the name a write gives them now, as api 0003
gave Latin letters theirs: one taken already is left apart, listed, never merged; keys follow."""

from __future__ import annotations

import importlib
import itertools
import unicodedata

import pytest
from django.core.management import call_command

from api.models import AgentKey
from dedup import services
from dedup.invisible import selector
from dedup.validation import label_form
from palace.models import AuditEntry, Drawer, Room, Wing
from tests.api.test_migrations import SAMPLES, made_before, migrate, names
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("api", "0003_look_alike_place_names")
MIGRATION = importlib.import_module("api.migrations.0004_cjk_look_alike_place_names")
TOKYO, KUZU = "\u6771\u4eac", "\u845b"


def cjk_joined(text: str) -> bool:
    """Whether a text holds a joiner or a variation selector and a CJK letter: where api 0004's
    rule gave a name another form than api 0003's."""
    cjk = ("CJK ", "HIRAGANA", "KATAKANA", "HANGUL", "HALFWIDTH", "HENTAIGANA", "IDEOGRAPHIC")
    unseen = any(c in "\u200c\u200d" or selector(c) for c in text)
    return unseen and any(unicodedata.name(c, "").startswith(cjk) for c in text)


def test_cjk_look_alikes_get_the_name_a_write_gives_and_keys_follow(dedup_settings):
    migrate(BEFORE)
    tokyo = made_before(f"{TOKYO}\u200d", "\u30e1\u30e2\ufe0f")
    kuzu = made_before(f"{KUZU}\U000e0100", "\ud55c\u200c\uad6d")
    drawer = services.drawer_write(room=tokyo, content="Filed under a joiner.").drawer
    client = agent_client("scout", wings=["placeholder"])
    AgentKey.objects.update(wings=[f"{TOKYO}\u200d"])  # as a key was made for the look-alike

    migrate()

    assert names(Wing) == [TOKYO, KUZU]
    assert names(Room) == ["\u30e1\u30e2", "\ud55c\uad6d"]
    assert AgentKey.objects.get().wings == [TOKYO]
    url = f"/api/wings/{TOKYO}/rooms/\u30e1\u30e2/drawers"
    response = client.post(url, {"content": "x"}, format="json")
    assert response.status_code == 201
    assert Drawer.objects.get(uuid=response.json()["id"]).room == tokyo
    assert client.get(f"/api/drawers/{drawer.uuid}").status_code == 200
    written = services.drawer_write_in(wing=f"{KUZU}\U000e0100", room="\ud55c\uad6d", content="y")
    assert written.drawer.room == kuzu  # the old form finds the renamed one
    renames = AuditEntry.objects.filter(data__migration=MIGRATION.MIGRATION).order_by("pk")
    assert [(e.action, e.before, e.after) for e in renames] == [
        ("wing.rename", {"name": f"{TOKYO}\u200d"}, {"name": TOKYO}),
        ("wing.rename", {"name": f"{KUZU}\U000e0100"}, {"name": KUZU}),
        ("room.rename", {"wing": TOKYO, "name": "\u30e1\u30e2\ufe0f"}, {"wing": TOKYO, "name": "\u30e1\u30e2"}),
        ("room.rename", {"wing": KUZU, "name": "\ud55c\u200c\uad6d"}, {"wing": KUZU, "name": "\ud55c\uad6d"}),
    ]  # fmt: skip


def test_a_cjk_look_alike_of_a_stored_name_stays_apart_listed(dedup_settings, capsys):
    migrate(BEFORE)
    made_before(TOKYO, "r")
    twins = [made_before(name, "r") for name in (f"{TOKYO}\u200d", "\u6771\u200c\u4eac")]
    twin_key = agent_client("twin", wings=["placeholder"])
    AgentKey.objects.update(wings=[f"{TOKYO}\u200d"])
    capsys.readouterr()

    migrate()

    printed = capsys.readouterr().out
    assert (
        f"The wing {TOKYO + chr(0x200D)!a} stays apart: {TOKYO!r} is another wing's name."
        in printed
    )
    assert names(Wing) == [TOKYO, f"{TOKYO}\u200d", "\u6771\u200c\u4eac"]
    assert AgentKey.objects.get().wings == [f"{TOKYO}\u200d"]
    assert [w["name"] for w in twin_key.get("/api/wings").json()] == [f"{TOKYO}\u200d"]
    call_command("name_twins")
    listed = capsys.readouterr().out.splitlines()
    stored = ", ".join(f"{room.wing.name!a} (id {room.wing_id})" for room in twins)
    assert listed[0].endswith(stored)


def test_names_the_rule_keeps_stay_and_the_reverse_changes_nothing(dedup_settings):
    """A joiner Arabic needs beside Han, conjoining jamo kept apart, an emoji's selector after
    a CJK symbol: kept. Migrated back and again, nothing more is renamed."""
    migrate(BEFORE)
    kept = ["\u0628\u200d\u6771", "\u1100\u200c\u1161", "\u3297\ufe0f"]
    for name in [*kept, f"{TOKYO}\ufe0f"]:
        made_before(name, "r")
    migrate()
    audited = AuditEntry.objects.count()
    migrate(BEFORE)
    assert names(Wing) == [*kept, TOKYO]
    migrate()
    assert names(Wing) == [*kept, TOKYO]
    assert AuditEntry.objects.count() == audited


CONTEXTS = [
    ("", ""),
    ("a", "b"),
    (" e", ""),
    ("\u0915\u094d", ""),
    ("\U0001f44d", "\u2764"),
    (TOKYO, ""),
    ("\u3072", "\ud55c"),
]


@pytest.mark.django_db(transaction=False)
def test_the_frozen_rule_is_today_s_label_form():
    for sample, (before, after) in itertools.product(SAMPLES, CONTEXTS):
        text = f"{before}{sample}{after}"
        assert MIGRATION.label_form(text) == label_form(text), ascii(text)
