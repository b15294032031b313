"""Reversing an import removes the rooms and wings it created that the reversal leaves empty
(an operator's trial: `GET /api/wings` still listed `alice/health` with no drawer), each room
audited as a room's deletion is (`room.delete`), each wing as a wing's (`wing.delete`), and both
listed in the reversal; a place that was there before, that holds anything else, or that
something else refers to, stays."""

import json
import threading
from pathlib import Path

import pytest
from django.db import connection, connections, transaction

from dedup import imports, services
from dedup.imports import reverse as reverse_module
from dedup.locks import hold_locks, lock_key
from palace.models import AuditEntry, Drawer, Room, Wing
from review.models import SweepPart, SweepRun

pytestmark = pytest.mark.django_db


def export(tmp_path: Path, *places: tuple[str, str]) -> Path:
    path = tmp_path / "export.jsonl"
    lines = [
        {
            "id": str(n),
            "document": f"Fact {n}: the backups of host {n} run nightly.",
            "metadata": {"wing": wing, "room": room},
        }
        for n, (wing, room) in enumerate(places)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def imported_and_reversed(path: Path, actor=None) -> imports.Reversal:
    imported = imports.import_create(source=str(path), format="mempalace")
    imports.import_run(imported, path=path)
    return imports.import_reverse(imported=imported, actor=actor)


def test_the_rooms_and_wings_it_made_go_with_it_audited(dedup_settings, tmp_path, admin_user):
    path = export(tmp_path, ("alice", "health"), ("alice", "health"), ("alice", "travel"))
    reversal = imported_and_reversed(path, actor=admin_user)
    assert not Room.objects.exists()
    assert not Wing.objects.exists()
    assert (reversal.rooms_removed, reversal.wings_removed) == (
        ["alice/health", "alice/travel"],
        ["alice"],
    )
    deleted = AuditEntry.objects.filter(action="room.delete").order_by("pk")
    assert [(e.actor, e.before) for e in deleted] == [
        (admin_user, {"wing": "alice", "name": "health"}),
        (admin_user, {"wing": "alice", "name": "travel"}),
    ]
    entry = AuditEntry.objects.get(action="import.reverse", target_type="import")
    assert (entry.data["rooms_removed"], entry.data["wings_removed"]) == (
        ["alice/health", "alice/travel"],
        ["alice"],
    )


def test_a_place_that_was_there_before_stays(dedup_settings, tmp_path):
    services.room_get_or_create(wing="alice", room="notes")  # the wing, before the import
    services.room_get_or_create(wing="bob", room="health")  # an empty room, before it too
    reversal = imported_and_reversed(export(tmp_path, ("alice", "health"), ("bob", "health")))
    assert reversal.rooms_removed == ["alice/health"]
    assert reversal.wings_removed == []
    assert sorted(str(room) for room in Room.objects.all()) == ["alice/notes", "bob/health"]


def test_a_room_written_into_since_stays_with_its_wing(dedup_settings, tmp_path):
    path = export(tmp_path, ("alice", "health"))
    imported = imports.import_create(source=str(path), format="mempalace")
    imports.import_run(imported, path=path)
    services.drawer_write_in(wing="alice", room="health", content="Dentist on the 4th at nine.")
    reversal = imports.import_reverse(imported=imported)
    assert (reversal.rooms_removed, reversal.wings_removed) == ([], [])
    assert Room.objects.get().drawers.count() == 1


def test_a_room_a_sweep_swept_stays(dedup_settings, tmp_path):
    """Deleting it would take the sweep's record of that part with it."""
    path = export(tmp_path, ("alice", "health"), ("alice", "travel"))
    imported = imports.import_create(source=str(path), format="mempalace")
    imports.import_run(imported, path=path)
    run = SweepRun.objects.create(threshold=0.9, status="done")
    health = Room.objects.get(name="health")
    SweepPart.objects.create(run=run, number=1, room=health, low_pk=0, high_pk=10)
    reversal = imports.import_reverse(imported=imported)
    assert (reversal.rooms_removed, reversal.wings_removed) == (["alice/travel"], [])
    assert list(Room.objects.all()) == [health]


def test_the_wings_are_no_longer_listed(dedup_settings, tmp_path, api):
    imported_and_reversed(export(tmp_path, ("alice", "health")))
    assert "alice" not in [wing["name"] for wing in api.get("/api/wings").json()]


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_a_wing_someone_is_making_a_room_in_stays_and_the_reversal_does_not_wait(tmp_path):
    """The wing's creation lock comes before rooms' writes, which the reversal holds: it only
    tries it. A writer holding it (creating a room there) keeps the wing, which it fills."""
    path = export(tmp_path, ("alice", "health"))
    imported = imports.import_create(source=str(path), format="mempalace")
    imports.import_run(imported, path=path)
    holding, release = threading.Event(), threading.Event()

    def creating_a_room() -> None:
        try:
            with transaction.atomic():
                hold_locks([lock_key("wing", "alice")])  # as `rooms_get_or_create` does
                holding.set()
                release.wait(timeout=30)
        finally:
            connections.close_all()

    writer = threading.Thread(target=creating_a_room)
    writer.start()
    try:
        assert holding.wait(timeout=30)
        reversal = imports.import_reverse(imported=imported)  # returns while the lock is held
    finally:
        release.set()
        writer.join(timeout=30)
    assert (reversal.rooms_removed, reversal.wings_removed) == (["alice/health"], [])
    assert Wing.objects.filter(name="alice").exists()


def test_each_wing_removed_has_its_own_audit_row(dedup_settings, tmp_path, admin_user):
    path = export(tmp_path, ("alice", "health"), ("bob", "travel"))
    imported = imports.import_create(source=str(path), format="mempalace")
    imports.import_run(imported, path=path)
    wings = dict(Wing.objects.values_list("name", "pk"))
    imports.import_reverse(imported=imported, actor=admin_user)
    deleted = AuditEntry.objects.filter(action="wing.delete").order_by("pk")
    assert [(e.actor, e.target_type, e.target_id, e.before) for e in deleted] == [
        (admin_user, "wing", str(wings["alice"]), {"name": "alice"}),
        (admin_user, "wing", str(wings["bob"]), {"name": "bob"}),
    ]
    reversal = AuditEntry.objects.get(action="import.reverse", target_type="import")
    assert reversal.data["wings_removed"] == ["alice", "bob"]  # the reversal's own row keeps them


def test_a_wing_kept_has_no_audit_row(dedup_settings, tmp_path):
    services.room_get_or_create(wing="alice", room="notes")  # the wing, before the import
    imported_and_reversed(export(tmp_path, ("alice", "health")))
    assert not AuditEntry.objects.filter(action="wing.delete").exists()


def test_a_reversal_that_fails_removes_no_place_and_audits_none(
    dedup_settings, tmp_path, monkeypatch
):
    """The places' rows and their audit rows are written in the reversal's transaction."""
    path = export(tmp_path, ("alice", "health"))
    imported = imports.import_create(source=str(path), format="mempalace")
    imports.import_run(imported, path=path)
    removed = reverse_module.places_removed

    def remove_then_fail(*arguments, **keywords):
        removed(*arguments, **keywords)
        raise RuntimeError("the reversal fails after removing the places")

    monkeypatch.setattr(reverse_module, "places_removed", remove_then_fail)
    with pytest.raises(RuntimeError):
        imports.import_reverse(imported=imported)
    assert [str(room) for room in Room.objects.all()] == ["alice/health"]
    assert not AuditEntry.objects.filter(action__in=["room.delete", "wing.delete"]).exists()


def records(tmp_path: Path, name: str, *rows: tuple[str, str, int]) -> Path:
    """A mempalace export of (wing, room, fact number) rows: the same number, the same text."""
    path = tmp_path / name
    lines = [
        {
            "id": f"fact-{n}",
            "document": f"Fact {n}: the backups of host {n} run nightly.",
            "metadata": {"wing": wing, "room": room},
        }
        for wing, room, n in rows
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def ran(path: Path):
    imported = imports.import_create(source=str(path), format="mempalace")
    imports.import_run(imported, path=path)
    return imported


@pytest.mark.parametrize("order", ["first, then second", "second, then first"])
def test_reversing_both_imports_of_the_same_rooms_leaves_no_place(dedup_settings, tmp_path, order):
    """A production trial: the first import made wing `imp` and its rooms; the second, of the
    same rooms, found some of its drawers stored. Reversing the first handed those to the
    second (they stay, and so do their rooms); reversing the second then removed every drawer
    but not the rooms, made before it, by the first: three empty rooms were listed."""
    first = ran(records(tmp_path, "1.jsonl", *[("imp", f"r{n % 3}", n) for n in range(6)]))
    second = ran(records(tmp_path, "2.jsonl", *[("imp", f"r{n % 3}", n) for n in range(3, 12)]))
    assert second.found.count() == 3
    wing = Wing.objects.get()
    rooms = dict(Room.objects.values_list("name", "pk"))
    both = [first, second] if order == "first, then second" else [second, first]
    reversals = [imports.import_reverse(imported=imported) for imported in both]
    assert not Drawer.objects.exists()
    assert not Room.objects.exists()
    assert not Wing.objects.exists()
    assert sorted(name for r in reversals for name in r.rooms_removed) == [
        "imp/r0",
        "imp/r1",
        "imp/r2",
    ]
    assert [name for r in reversals for name in r.wings_removed] == ["imp"]
    audited = AuditEntry.objects.filter(action__in=["room.delete", "wing.delete"])
    assert sorted(audited.values_list("action", "target_id")) == [
        *sorted(("room.delete", str(pk)) for pk in rooms.values()),
        ("wing.delete", str(wing.pk)),
    ]


@pytest.mark.parametrize("order", ["first, then second", "second, then first"])
def test_reversing_both_imports_of_one_wing_leaves_no_wing(dedup_settings, tmp_path, order):
    """The first import made the wing and a room, the second another room in it: reversing the
    first left the wing (the second's room was in it); reversing the second removed its room
    and left the wing, made before it, with no room and no `wing.delete` audited."""
    first = ran(records(tmp_path, "3.jsonl", ("w", "a", 1), ("w", "a", 2)))
    second = ran(records(tmp_path, "4.jsonl", ("w", "b", 3), ("w", "b", 4)))
    wing = Wing.objects.get()
    both = [first, second] if order == "first, then second" else [second, first]
    reversals = [imports.import_reverse(imported=imported) for imported in both]
    assert not Room.objects.exists()
    assert not Wing.objects.exists()
    assert [name for r in reversals for name in r.wings_removed] == ["w"]
    audited = AuditEntry.objects.filter(action="wing.delete")
    assert list(audited.values_list("target_id", "before")) == [(str(wing.pk), {"name": "w"})]


def test_a_place_a_reversed_import_made_stays_while_it_holds_another_drawer(
    dedup_settings, tmp_path
):
    """Reversing the second import removes its room; the wing the first made, reversed since,
    goes only once no room is left in it: a room written into by an agent keeps it."""
    first = ran(records(tmp_path, "1.jsonl", ("w", "a", 1)))
    second = ran(records(tmp_path, "2.jsonl", ("w", "b", 2)))
    services.drawer_write_in(wing="w", room="c", content="Dentist on the 4th at nine.")
    imports.import_reverse(imported=first)
    reversal = imports.import_reverse(imported=second)
    assert (reversal.rooms_removed, reversal.wings_removed) == (["w/b"], [])
    assert [str(room) for room in Room.objects.all()] == ["w/c"]
