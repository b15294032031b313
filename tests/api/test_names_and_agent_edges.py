"""What an agent integrator found at the API's edges: names a path or a key could not name
again, names that look alike but were two, a key judged on a name the write then changed, an MCP
supersession that read "" as no replacement, a kind filter that cared for case, and a checkpoint
whose own items clashed naming a drawer that was never stored."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest

from api.mcp_server import writes
from api.models import AgentKey
from dedup import imports, services
from dedup.errors import InvalidInput
from palace.models import Checkpoint, Drawer, Entity, Room, Wing
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db


def drawers_url(wing: str, room: str = "r") -> str:
    return f"/api/wings/{wing}/rooms/{room}/drawers"


# Names a path or a key must be able to name again ---------------------------------------------


@pytest.mark.parametrize("wing", ["a/b", "*", "ops,secret", ".", ".."])
def test_a_new_wing_a_path_or_key_cannot_name_is_refused(api, wing):
    response = api.post("/api/diary", {"wing": wing, "content": "x"}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert Wing.objects.count() == 0


def test_a_new_room_a_path_cannot_name_is_refused():
    with pytest.raises(InvalidInput, match="room must not contain '/'"):
        services.drawer_write_in(wing="notes", room="x/y", content="x")
    assert Room.objects.count() == 0


@pytest.mark.parametrize("room", [".", "..", " .. "])
def test_a_room_named_as_a_dot_segment_is_refused(room):
    """A helper's trial: `/api/wings/notes/rooms/%2e%2e/drawers` made a room `..`, which a
    browser resolves as the folder above: no console link could name it."""
    with pytest.raises(InvalidInput, match=r"must not be '\.' or '\.\.'"):
        services.drawer_write_in(wing="notes", room=room, content="x")
    assert Room.objects.count() == 0


def test_renaming_a_room_to_a_dot_segment_is_refused():
    room = services.room_get_or_create(wing="notes", room="r")
    with pytest.raises(InvalidInput, match=r"must not be '\.' or '\.\.'"):
        services.room_change(room=room, name="..", wing=room.wing)


def test_a_name_holding_dots_is_still_a_name():
    written = services.drawer_write_in(wing="notes", room="...", content="Three dots.")
    assert written.drawer.room.name == "..."


def test_a_wing_made_before_the_rule_is_still_written_into():
    Wing.objects.create(name="a/b")
    written = services.drawer_write_in(wing="a/b", room="r", content="Still reachable.")
    assert written.drawer.room.wing.name == "a/b"


def test_renaming_a_wing_to_a_name_no_path_reaches_is_refused():
    wing = Wing.objects.create(name="notes")
    with pytest.raises(InvalidInput, match="'/'"):
        services.wing_rename(wing=wing, name="no/tes")


# Names that look alike are one name ------------------------------------------------------------


def test_a_wing_typed_decomposed_is_the_composed_one(api):
    composed, decomposed = "café", unicodedata.normalize("NFD", "café")
    assert composed != decomposed
    api.post("/api/diary", {"wing": composed, "content": "One."}, format="json")
    api.post("/api/diary", {"wing": decomposed, "content": "Two."}, format="json")
    assert list(Wing.objects.values_list("name", flat=True)) == [composed]


def test_an_invisible_space_in_a_name_is_taken_out(api):
    api.post("/api/diary", {"wing": "no\u200btes", "content": "One."}, format="json")
    assert list(Wing.objects.values_list("name", flat=True)) == ["notes"]


# Every character that shows nothing: bidirectional marks and controls, invisible operators, the
# Mongolian vowel separator, tags, the combining grapheme joiner and the fillers.
UNSEEN = [
    "\u200e", "\u200f", "\u202a", "\u202e", "\u2061", "\u2064", "\u2066", "\u206f",
    "\u180e", "\U000e0020", "\u034f", "\u115f", "\u3164", "\u17b4",
]  # fmt: skip


@pytest.mark.parametrize("unseen", UNSEEN, ids=[f"U+{ord(c):04X}" for c in UNSEEN])
def test_a_name_holding_a_character_that_shows_nothing_is_the_name_without_it(unseen):
    services.drawer_write_in(wing="personal", room="r", content="One.")
    written = services.drawer_write_in(wing=f"per{unseen}sonal", room="r", content="Two.")
    assert written.drawer.room.wing.name == "personal"
    assert Wing.objects.count() == 1


def test_a_name_of_fillers_alone_is_blank(api):
    response = api.post("/api/diary", {"wing": "\u3164\u3164", "content": "One."}, format="json")
    assert response.json()["code"] == "empty_label"
    assert not Wing.objects.exists()


def test_an_entity_name_is_recorded_without_a_bidirectional_control():
    resolution = services.entity_resolve(name="\u202eAda Lovelace", kind="person")
    assert resolution.entity.name == "Ada Lovelace"


def test_an_alias_is_recorded_without_one_either():
    entity = services.entity_resolve(name="Ada Lovelace", kind="person").entity
    services.entity_alias_add(entity=entity, alias="Countess\u2066 Lovelace")
    assert list(entity.alias_set.values_list("alias", flat=True)) == ["Countess Lovelace"]


def test_a_joiner_a_script_needs_is_kept():
    name = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # Persian, with a ZWNJ
    written = services.drawer_write_in(wing=name, room="r", content="x")
    assert written.drawer.room.wing.name == name


# A key is judged on the wing the write reaches ---------------------------------------------------


def test_a_key_reaches_its_wing_however_the_path_spaces_it(dedup_settings):
    client = agent_client("beta", wings=("notes",))
    response = client.post(drawers_url("notes%20"), {"content": "Spaced."}, format="json")
    assert response.status_code == 201
    assert response.json()["wing"] == "notes"


def test_a_key_does_not_reach_another_wing_spaced_like_its_own(dedup_settings):
    client = agent_client("beta", wings=("notes",))
    response = client.post(drawers_url("ops%20"), {"content": "Spaced."}, format="json")
    assert response.status_code == 403


def test_reads_name_the_wing_as_writes_keep_it(api):
    api.post(drawers_url("notes"), {"content": "Backups run nightly."}, format="json")
    assert api.get("/api/wings/notes%20").status_code == 200
    assert api.get(drawers_url("notes%20")).json()["results"][0]["wing"] == "notes"
    hits = api.get("/api/search", {"q": "backups", "wing": "notes "}).json()["results"]
    assert len(hits) == 1


# MCP's supersession reads its replacement as REST does -------------------------------------------


def refusal(answer: Any) -> dict[str, Any]:
    assert getattr(answer, "is_error", False), answer
    return json.loads(answer.content[0].text)


def test_an_empty_replacement_is_refused_and_supersedes_nothing(ctx):
    drawer = services.drawer_write_in(wing="w", room="r", content="Port 5432.").drawer
    body = refusal(writes.supersede_drawer(ctx, drawer_id=str(drawer.uuid), by=""))
    assert body["code"] == "invalid"
    assert body["error"].startswith("by:")
    assert Drawer.objects.get(pk=drawer.pk).valid_to is None


def test_an_unknown_replacement_names_by(ctx):
    drawer = services.drawer_write_in(wing="w", room="r", content="Port 5432.").drawer
    unknown = "00000000-0000-4000-8000-000000000000"
    body = refusal(writes.supersede_drawer(ctx, drawer_id=str(drawer.uuid), by=unknown))
    assert body["code"] == "drawer_not_found"
    assert body["details"] == {"field": "by"}


# The entity list's kind filter -------------------------------------------------------------------


def test_the_kind_filter_takes_any_case(api):
    services.entity_resolve(name="PostgreSQL", kind="tool")
    assert len(api.get("/api/entities", {"kind": "Tool"}).json()["results"]) == 1


# A checkpoint whose own items clash --------------------------------------------------------------


def test_two_items_naming_one_drawer_with_other_content_are_named(api):
    items = [
        {"content": "named a", "destination": "general", "name": "nm"},
        {"content": "named b", "destination": "general", "name": "nm"},
    ]
    response = api.post("/api/checkpoints", {"id": "c", "items": items}, format="json")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "drawer_name_taken"
    assert body["details"] == {"items": [0, 1], "name": "nm"}
    assert Checkpoint.objects.count() == 0


def test_an_item_refused_by_the_write_path_is_named_by_its_index(api):
    services.drawer_write_in(wing="general", room="entries", content="old", name="nm")
    items = [
        {"content": "fine", "destination": "general"},
        {"content": "new", "destination": "general", "name": "nm"},
    ]
    response = api.post("/api/checkpoints", {"id": "c", "items": items}, format="json")
    assert response.status_code == 409
    assert response.json()["details"]["item"] == 1
    assert Drawer.objects.count() == 1


def test_a_replayed_checkpoint_says_which_drawers_are_no_longer_stored(api):
    body = {"id": "c", "items": [{"content": "kept", "destination": "general"}]}
    body["items"].append({"content": "deleted since", "destination": "general"})
    first = api.post("/api/checkpoints", body, format="json").json()
    assert [d["present"] for d in first["drawers"]] == [True, True]
    services.drawer_delete(drawer=Drawer.objects.get(uuid=first["drawers"][1]["drawer"]))
    replay = api.post("/api/checkpoints", body, format="json").json()
    assert replay["replayed"] is True
    assert [d["present"] for d in replay["drawers"]] == [True, False]
    assert [d["created"] for d in replay["drawers"]] == [True, True]


def test_two_items_naming_one_drawer_of_one_room_spelled_two_ways_are_named(api):
    items = [
        {"content": "named a", "destination": "general", "name": "nm"},
        {"content": "named b", "destination": "general", "wing": "general ", "name": "nm"},
    ]
    response = api.post("/api/checkpoints", {"id": "c", "items": items}, format="json")
    assert response.status_code == 409
    assert response.json()["details"] == {"items": [0, 1], "name": "nm"}
    assert Checkpoint.objects.count() == 0


# Names made before these rules ------------------------------------------------------------------

NFD = unicodedata.normalize("NFD", "café")


def made_before(wing: str, room: str = "notes") -> Room:
    """A wing and room as the write path stored them before (trimmed only)."""
    return Room.objects.create(wing=Wing.objects.get_or_create(name=wing)[0], name=room)


def test_a_write_naming_a_wing_in_nfd_goes_into_the_composed_one_beside_its_twin():
    """api/0002 composed every wing's name it could; a decomposed one left is a twin of a
    composed one, and a name is found composed: the twin is reached once renamed."""
    room = made_before("café")
    twin = made_before(NFD)
    written = services.drawer_write_in(wing=NFD, room="notes", content="A memory.")
    assert written.drawer.room == room
    assert not twin.drawers.exists()


def test_a_key_made_before_for_an_nfd_wing_reaches_the_composed_one(dedup_settings):
    made_before("café")
    client = agent_client("scout", wings=("placeholder",))
    AgentKey.objects.update(wings=[NFD, "café"])  # as api/0002 leaves a key of a renamed wing
    response = client.post(drawers_url(NFD, "notes"), {"content": "Hello there."}, format="json")
    assert response.status_code == 201
    assert response.json()["wing"] == "café"


def test_a_key_naming_only_a_decomposed_twin_reaches_no_other_wing(dedup_settings):
    """A key made for a twin api/0002 left apart does not reach the composed wing its name now
    finds (it was never given that wing)."""
    made_before("café")
    made_before(NFD)
    client = agent_client("scout", wings=("placeholder",))
    AgentKey.objects.update(wings=[NFD])
    response = client.post(drawers_url(NFD, "notes"), {"content": "Hello there."}, format="json")
    assert response.status_code == 403
    assert response.json()["code"] == "out_of_scope"


def test_a_backup_of_a_room_with_a_slash_restores_into_a_new_store(tmp_path):
    """A store's own Castellan export keeps its names: an import gives a new room the name the
    file has (a room made before the rule holds a '/')."""
    from dedup import imports

    made_before("ops", "2024/q1")
    services.drawer_write_in(wing="ops", room="2024/q1", content="Quarterly review notes.")
    path = tmp_path / "backup.jsonl"
    path.write_text("".join(line + "\n" for line in imports.export_lines()))
    Drawer.objects.all().delete()
    Room.objects.all().delete()
    Wing.objects.all().delete()
    imported = imports.import_create(source=str(path), format="castellan")
    imports.import_run(imported, path=path)
    imported.refresh_from_db()
    assert imported.errors == []
    assert Drawer.objects.get().room.name == "2024/q1"


def castellan_import(tmp_path, lines: list[dict[str, Any]], wings=()) -> imports.Tally:
    path = tmp_path / "backup.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    imported = imports.import_create(source=str(path), format="castellan", wings=wings)
    return imports.import_run(imported, path=path)


def test_a_backup_naming_a_wing_decomposed_restores_into_the_composed_one(tmp_path):
    """A file exported before api 0002 composed the store's names (or typed decomposed) writes
    into the wing and room of the composed names, and its lines naming its drawers by the
    file's ids find them there, in the import's wings (as the file names them)."""
    room = made_before("café", "résumé")
    lines = [
        {"type": "drawer", "id": "d1", "wing": NFD, "room": unicodedata.normalize("NFD", "résumé"),
         "content": "The espresso machine is descaled on Fridays."},
        {"type": "mention", "drawer": "d1", "name": "Espresso", "kind": "thing"},
    ]  # fmt: skip
    tally = castellan_import(tmp_path, lines, wings={NFD})
    assert tally.errors == []
    assert (Wing.objects.count(), Room.objects.count()) == (1, 1)
    assert Drawer.objects.get().room == room
    assert Entity.objects.get(name="Espresso").mentions.get().drawer.room == room


def test_an_import_gives_a_new_wing_its_composed_name_and_keeps_a_slash(tmp_path):
    lines = [
        {"type": "drawer", "id": "d1", "wing": f"{NFD}\u200b", "room": "2024/q1", "content": "x"}
    ]
    assert castellan_import(tmp_path, lines).errors == []
    assert str(Room.objects.get()) == "café/2024/q1"
    written = services.drawer_write_in(wing="café", room="notes", content="y")
    assert Wing.objects.get() == written.drawer.room.wing  # a write of the composed name finds it


def test_an_alias_is_taken_back_as_it_was_given():
    entity = services.entity_resolve(name="Ada Lovelace", kind="person").entity
    services.entity_alias_add(entity=entity, alias="Countess\u2066 Lovelace")
    _, removed = services.entity_alias_remove(entity=entity, alias="Countess\u2066 Lovelace")
    assert removed is True
    assert not entity.alias_set.exists()


@pytest.mark.parametrize(
    "name",
    [
        "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f team",  # England
        "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f team",  # Scotland
        "\u06dd1 notes",  # Arabic's end of ayah, drawn
    ],
)
def test_format_characters_that_are_drawn_stay(name):
    assert services.drawer_write_in(wing=name, room="r", content="x").drawer.room.wing.name == name
