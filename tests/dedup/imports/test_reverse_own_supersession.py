"""A supersession an import recorded itself is its own work, not work built on since: its reversal
removes the drawer. One made by anyone else, after the import or while it ran, keeps it."""

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from dedup import imports, services
from dedup.imports import run as import_run_module
from dedup.imports import supersessions
from dedup.locks import rows_held
from palace.models import AuditAction, AuditEntry, Drawer, Import

pytestmark = pytest.mark.django_db


def seed() -> tuple[Drawer, Drawer]:
    """A store where one drawer is superseded by another."""
    old = services.drawer_write_in(wing="ops", room="db", content="Staging runs on 5432.")
    new = services.drawer_write_in(wing="ops", room="db", content="Staging moved to 5433.")
    services.drawer_supersede(drawer=old.drawer, by=new.drawer)
    return old.drawer, new.drawer


def export_file(tmp_path: Path, capsys) -> Path:
    out = tmp_path / "castellan.jsonl"
    call_command("export_memories", str(out), "--format", "castellan", "--no-progress")
    capsys.readouterr()
    return out


def import_file(path: Path, capsys) -> int:
    call_command("import_memories", str(path), "--format", "castellan", "--no-progress")
    return json.loads(capsys.readouterr().out)["import"]


def reverse(import_id: int, capsys) -> dict:
    call_command("import_reverse", str(import_id))
    return json.loads(capsys.readouterr().out)


def test_an_export_imported_back_into_its_store_reverses_whole(tmp_path, capsys):
    old, new = seed()
    import_id = import_file(export_file(tmp_path, capsys), capsys)
    again = Drawer.objects.get(imports=import_id)  # the superseded drawer, stored again
    assert again.valid_to is not None
    reversal = reverse(import_id, capsys)
    assert reversal["removed"] == [str(again.uuid)]
    assert reversal["kept"] == []
    assert set(Drawer.objects.values_list("pk", flat=True)) == {old.pk, new.pk}


def test_the_drawer_stored_again_is_superseded_by_the_drawer_holding_its_successor(
    tmp_path, capsys
):
    _, new = seed()
    import_id = import_file(export_file(tmp_path, capsys), capsys)
    again = Drawer.objects.get(imports=import_id)
    assert again.superseded_by_id == new.pk  # held as the store's own drawer: as it was
    entry = AuditEntry.objects.get(action=AuditAction.DRAWER_SUPERSEDE, target_id=str(again.uuid))
    assert entry.data == {"import": import_id}
    assert entry.after["superseded_by"] == str(new.uuid)


def drawer_line(id: str, content: str, **fields) -> dict:
    return {"type": "drawer", "id": id, "wing": "w", "room": "r", "content": content, **fields}


def castellan(tmp_path: Path, *lines: dict) -> Path:
    path = tmp_path / "file.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_supersession_made_after_the_import_keeps_the_drawer(tmp_path):
    path = castellan(tmp_path, drawer_line("d1", "The deploy window is Tuesday."))
    imported = imports.import_create(source=str(path), format="castellan")
    imports.import_run(imported, path=path)
    services.drawer_supersede(drawer=Drawer.objects.get())
    reversal = imports.import_reverse(imported=imported)
    assert reversal.removed == []
    assert [kept["reasons"] for kept in reversal.kept] == [["it was superseded"]]


def test_a_supersession_made_while_the_import_ran_is_not_taken_for_its_own(tmp_path, monkeypatch):
    """Someone supersedes the drawer after its chunk was written, before the import applies the
    file's validity: the import leaves it as they made it, and its reversal keeps it."""
    path = castellan(
        tmp_path,
        drawer_line("d1", "Old fact.", valid_to="2001-01-02T03:04:05+00:00"),
        drawer_line("d2", "New fact."),
    )
    apply_supersessions = import_run_module.apply_supersessions

    def someone_supersedes_first(imported, supersessions, held_as, tally):
        services.drawer_supersede(drawer=Drawer.objects.get(content="Old fact."))
        apply_supersessions(imported, supersessions, held_as, tally)

    monkeypatch.setattr(import_run_module, "apply_supersessions", someone_supersedes_first)
    imported = imports.import_create(source=str(path), format="castellan")
    imports.import_run(imported, path=path)
    old = Drawer.objects.get(content="Old fact.")
    assert old.valid_to.year != 2001  # theirs, not the file's
    new = Drawer.objects.get(content="New fact.")
    reversal = imports.import_reverse(imported=imported)
    assert reversal.removed == [str(new.uuid)]
    assert [kept["drawer"] for kept in reversal.kept] == [str(old.uuid)]


def test_a_supersession_an_earlier_import_of_the_drawer_recorded_is_not_this_ones(tmp_path):
    """The first import stored the drawer superseded and was reversed; the second stores it again
    (a removed drawer's id is used again), current, and someone supersedes it since: kept."""
    superseded = drawer_line("d1", "Old fact.", valid_to="2026-01-02T03:04:05+00:00")
    first_path = castellan(tmp_path, superseded)
    first = imports.import_create(source=str(first_path), format="castellan")
    imports.import_run(first, path=first_path)
    assert imports.import_reverse(imported=first).kept == []
    second_path = castellan(tmp_path, drawer_line("d1", "Old fact."))
    second = imports.import_create(source=str(second_path), format="castellan")
    imports.import_run(second, path=second_path)
    drawer = Drawer.objects.get()
    services.drawer_supersede(drawer=drawer)
    reversal = imports.import_reverse(imported=second)
    assert [kept["drawer"] for kept in reversal.kept] == [str(drawer.uuid)]
    assert Import.objects.get(pk=second.pk).status == Import.Status.REVERSED


def test_the_validity_pass_holds_its_drawers_and_successors_before_updating_any(
    tmp_path, monkeypatch
):
    """In id order, as `drawer_supersede` holds a pair (dedup/locks.py): updated in the file's
    order, which an earlier import's drawers make other than the ids', two of them could each
    wait on a supersession holding the other."""
    path = castellan(
        tmp_path,
        drawer_line("d1", "Old fact.", valid_to="2001-01-02T03:04:05+00:00", superseded_by="d3"),
        drawer_line("d2", "Older fact.", valid_to="2001-01-02T03:04:05+00:00"),
        drawer_line("d3", "New fact."),
    )
    held: list[list[int]] = []

    def recorded(model, ids):
        held.append(sorted(ids))
        assert Drawer.objects.filter(valid_to__isnull=False).count() == 0  # nothing updated yet
        return rows_held(model, ids)

    monkeypatch.setattr(supersessions, "rows_held", recorded)
    imported = imports.import_create(source=str(path), format="castellan")
    imports.import_run(imported, path=path)
    ids = dict(Drawer.objects.values_list("content", "pk"))
    assert held == [sorted([ids["Old fact."], ids["Older fact."], ids["New fact."]])]
    assert Drawer.objects.filter(valid_to__isnull=False).count() == 2
