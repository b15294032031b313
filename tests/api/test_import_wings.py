"""Which keys see an import: one rule for imports made by `import_memories` and over the API. Each
records the wings its records name when it is created; a key sees (and may reverse) the import
when it reaches every one of them, and only a key of every wing sees one that names none."""

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from dedup import imports, services
from palace.models import Drawer, Import
from review.curators import curators_group
from tests.conftest import agent_client, person_client

pytestmark = pytest.mark.django_db


def jsonl(tmp_path: Path, *lines: dict) -> Path:
    path = tmp_path / "notes.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def command(path: Path, capsys, *arguments: str) -> int:
    call_command("import_memories", str(path), "--no-progress", *arguments)
    return json.loads(capsys.readouterr().out)["import"]


def scratch_file(tmp_path: Path) -> Path:
    return jsonl(
        tmp_path,
        {"uid": "n1", "text": "Scratch: try the new linter.", "meta": {"project": "scratch"}},
        {"uid": "n2", "text": "Scratch: pin the formatter.", "meta": {"project": "scratch"}},
    )


def mapped_import(tmp_path: Path, capsys) -> int:
    mapping = ["--map", "id=uid", "--map", "content=text", "--map", "wing=meta.project"]
    return command(scratch_file(tmp_path), capsys, "--format", "jsonl", *mapping)


def test_a_commands_import_records_the_wings_its_records_name(tmp_path, capsys):
    import_id = mapped_import(tmp_path, capsys)
    assert Import.objects.get(pk=import_id).options["wings"] == ["scratch"]


def test_a_key_reaching_a_commands_wings_sees_and_reverses_its_import(
    tmp_path, capsys, user, dedup_settings
):
    import_id = mapped_import(tmp_path, capsys)
    client = agent_client(user.username, wings=["notes", "scratch"])
    assert client.get(f"/api/imports/{import_id}").status_code == 200
    assert client.get(f"/api/imports/{import_id}/drawers").status_code == 200
    response = client.post(f"/api/imports/{import_id}/reverse")
    assert response.status_code == 200
    assert response.json()["status"] == "reversed"
    assert not Drawer.objects.exists()


def test_a_key_short_of_a_commands_wings_does_not_see_its_import(
    tmp_path, capsys, user, dedup_settings
):
    services.drawer_write_in(wing="notes", room="general", content="Notes: standup at ten.")
    path = jsonl(
        tmp_path,
        {"id": "a", "content": "Notes: ship on Friday.", "wing": "notes", "room": "r"},
        {"id": "b", "content": "Scratch: try the new linter.", "wing": "scratch", "room": "r"},
    )
    import_id = command(path, capsys, "--format", "jsonl")
    client = agent_client(user.username, wings=["notes"])
    for response in (
        client.get(f"/api/imports/{import_id}"),
        client.post(f"/api/imports/{import_id}/reverse"),
    ):
        assert response.status_code == 404
        assert response.json()["code"] == "import_not_found"
    assert Import.objects.get(pk=import_id).status == Import.Status.DONE


def test_a_curator_sees_a_commands_import(tmp_path, capsys, user, dedup_settings):
    import_id = mapped_import(tmp_path, capsys)
    user.groups.add(curators_group())
    assert person_client(user).get(f"/api/imports/{import_id}").status_code == 200


def test_a_wing_given_for_the_whole_file_is_the_one_recorded(tmp_path, capsys):
    path = jsonl(tmp_path, {"id": "a", "content": "A fact.", "wing": "elsewhere", "room": "r"})
    import_id = command(path, capsys, "--format", "jsonl", "--wing", " scratch ")
    assert Import.objects.get(pk=import_id).options["wings"] == ["scratch"]


def test_a_records_wing_is_recorded_as_the_write_path_files_it(tmp_path, capsys):
    path = jsonl(
        tmp_path,
        {"id": "a", "content": "A fact.", "wing": " scratch ", "room": "r"},
        {"id": "b", "content": "Refused.", "wing": "bad\twing", "room": "r"},
    )
    import_id = command(path, capsys, "--format", "jsonl")
    assert Import.objects.get(pk=import_id).options["wings"] == ["scratch"]
    assert Drawer.objects.get().room.wing.name == "scratch"


def test_an_import_naming_no_wing_is_seen_by_keys_of_every_wing_only(
    tmp_path, capsys, user, dedup_settings
):
    path = jsonl(tmp_path, {"type": "entity", "name": "Katarina", "kind": "person"})
    import_id = command(path, capsys, "--format", "castellan")
    assert Import.objects.get(pk=import_id).options["wings"] == []
    scoped = agent_client(user.username, wings=["notes", "scratch"])
    assert scoped.get(f"/api/imports/{import_id}").json()["code"] == "import_not_found"
    assert agent_client(user.username).get(f"/api/imports/{import_id}").status_code == 200


def test_a_queued_import_is_seen_by_the_keys_reaching_its_wings(
    tmp_path, capsys, user, dedup_settings, monkeypatch
):
    """A command's import records its wings before it writes anything: a key of them sees it
    queued (here its run never starts), and may cancel it; a key of other wings does not."""
    monkeypatch.setattr(imports, "import_run", lambda imported, **options: imports.Tally())
    import_id = mapped_import(tmp_path, capsys)
    other = agent_client(user.username, wings=["notes"])
    assert other.get(f"/api/imports/{import_id}").status_code == 404
    client = agent_client(user.username, wings=["scratch"])
    assert client.get(f"/api/imports/{import_id}").json()["status"] == "queued"
    assert client.post(f"/api/imports/{import_id}/reverse").json()["status"] == "reversed"


def test_a_key_without_delete_cannot_reverse_a_commands_import(
    tmp_path, capsys, user, dedup_settings
):
    import_id = mapped_import(tmp_path, capsys)
    reader = agent_client(user.username, wings=["scratch"], rights=["read", "write"])
    assert reader.post(f"/api/imports/{import_id}/reverse").status_code == 403
    assert Drawer.objects.count() == 2


def test_a_commands_mention_finds_its_drawer_in_the_imports_wings_only(tmp_path, capsys):
    """As over the API: a line naming a drawer by the file's id looks in the wings the records
    name, so an import shown to a key of those wings touched nothing beyond them."""
    services.drawer_write_in(
        wing="private",
        room="r",
        content="The vault is hidden.",
        drawer_id=imports.client_id("castellan", "private", "secret-1"),
    )
    path = jsonl(
        tmp_path,
        {"type": "drawer", "id": "x1", "content": "A note.", "wing": "scratch", "room": "r"},
        {"type": "mention", "drawer": "secret-1", "name": "Vault", "kind": "tool"},
    )
    call_command("import_memories", str(path), "--format", "castellan", "--no-progress")
    result = json.loads(capsys.readouterr().out)
    assert [error["line"] for error in result["malformed"]] == [2]
