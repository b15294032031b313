"""An import names wings as a write does: the request's `wing` (and `import_memories --wing`) is
checked as a write's, and a record's wing that no agent key can name (`*` is every wing to a key,
`,` separates its wings) is a malformed line; a record's `/`, which only a path cannot name, is
kept, so a backup of a room holding one restores whole (tests/dedup/imports/test_foreign_formats)."""

import json

import pytest
from django.core.management import CommandError, call_command

from palace.models import Drawer, Import, Room, Wing

pytestmark = pytest.mark.django_db

LINE = json.dumps({"id": "r1", "content": "Filed where the request says.", "room": "rm"})


def upload(api, *lines: dict, **body) -> dict:
    data = "\n".join(json.dumps(line) for line in lines) if lines else LINE
    response = api.post("/api/imports", {"format": "jsonl", "data": data, **body}, format="json")
    assert response.status_code == 202
    return api.get(f"/api/imports/{response.json()['id']}").json()


@pytest.mark.parametrize(
    ("wing", "code"),
    [("*", "invalid"), ("a,b", "invalid"), ("x/y", "invalid"), ("\u3164", "empty_label")],
)
def test_the_requests_wing_is_checked_as_a_writes(api, wing, code):
    """Each was 202, done, and made a wing a write refuses (the attack trial)."""
    response = api.post(
        "/api/imports", {"format": "jsonl", "wing": wing, "data": LINE}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == code
    assert response.json()["details"] == {"field": "wing"}
    assert not Import.objects.exists()
    assert not Wing.objects.exists()


def test_the_requests_wing_may_be_a_stored_one_a_path_cannot_name(api):
    """A wing stored before names were refused a '/' (or restored from a backup) is written into
    by the name it has, as any write's."""
    Wing.objects.create(name="x/y")
    detail = upload(api, wing="x/y")
    assert detail["summary"]["created"] == 1
    assert Drawer.objects.get().room.wing.name == "x/y"


@pytest.mark.parametrize("wing", ["*", "a,b", " * ", "x,"])
def test_a_records_wing_no_key_can_name_is_a_malformed_line(api, wing):
    detail = upload(
        api,
        {"id": "r1", "content": "No key reaches this wing.", "wing": wing},
        {"id": "r2", "content": "This one is filed.", "wing": "notes"},
    )
    assert detail["malformed"] == [
        {
            "file": "upload.jsonl",
            "line": 1,
            "error": "wing must not be '*' nor contain ',' (an agent key's wings are written so).",
        }
    ]
    assert list(Wing.objects.values_list("name", flat=True)) == ["notes"]


def test_a_records_slash_is_kept_as_a_restored_name(api):
    """Decided: a wing or room holding '/' comes back whole from a file (a backup of a store that
    held one); keys name it, MCP and a drawer's id reach it, only a path cannot."""
    upload(api, {"id": "r1", "content": "Restored whole.", "wing": "x/y", "room": "db/primary"})
    room = Room.objects.select_related("wing").get()
    assert (room.wing.name, room.name) == ("x/y", "db/primary")


def test_a_records_new_wing_of_fillers_only_is_blank(api):
    """It was created, a wing that shows as nothing; a write refuses it `empty_label`."""
    detail = upload(api, {"id": "r1", "content": "Nowhere to be seen.", "wing": "\u3164"})
    assert [m["error"] for m in detail["malformed"]] == ["wing must not be blank."]
    assert not Wing.objects.exists()


@pytest.mark.parametrize("wing", ["*", "a,b", "x/y"])
def test_import_memories_wing_is_checked_as_a_writes(tmp_path, wing):
    path = tmp_path / "notes.jsonl"
    path.write_text(LINE + "\n")
    with pytest.raises(CommandError, match="wing must not"):
        call_command("import_memories", str(path), "--format", "jsonl", "--wing", wing)
    assert not Import.objects.exists()
    assert not Wing.objects.exists()
