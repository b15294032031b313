"""A running import keeps the rooms it looked up (`ChunkQueue.rooms`). One of them deleted
meanwhile (an admin deleting an empty room, another import's reversal removing the places it
made) failed the chunk's commit on the drawers' foreign key, and the import with it: the chunk
now finds its rooms again once it holds their writes, and writes a record whose room is gone as
a record of a new place (`drawer_write_in`), into the room made again."""

import json
import threading
import time
from pathlib import Path

import pytest
from django.db import connection, connections, transaction

from dedup import imports, services
from dedup.imports import chunks
from dedup.locks import hold_lock, room_writes
from palace.models import Drawer, Import, Room

# Each chunk commits, as in production: the foreign key is checked there.
pytestmark = pytest.mark.django_db(transaction=True)


def export(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "export.jsonl"
    lines = [
        {
            "id": str(n),
            "document": f"Fact {n}: the backups of host {n} run nightly at {n} past two.",
            "metadata": {"wing": "ops", "room": "scratch"},
        }
        for n in range(count)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def run(path: Path) -> tuple[Import, imports.Tally]:
    imported = imports.import_create(source=str(path), format="mempalace")
    tally = imports.import_run(imported, path=path)
    imported.refresh_from_db()
    return imported, tally


def test_a_room_deleted_after_the_import_looked_it_up_is_made_again(
    dedup_settings, tmp_path, monkeypatch
):
    empty = services.room_get_or_create(wing="ops", room="scratch")
    looked_up = chunks.look_up_rooms
    deleted: list[int] = []

    def look_up_then_lose(records, rooms):
        looked_up(records, rooms)
        if not deleted:
            deleted.append(rooms["ops", "scratch"].pk)
            services.room_delete(room=rooms["ops", "scratch"])

    monkeypatch.setattr(chunks, "look_up_rooms", look_up_then_lose)
    imported, tally = run(export(tmp_path, 3))
    assert deleted == [empty.pk]
    assert imported.status == Import.Status.DONE
    assert tally.summary()["created"] == 3
    assert tally.summary()["malformed"] == 0
    assert imported.summary["created"] == 3
    assert imported.drawers.count() == 3
    room = Room.objects.get()
    assert (str(room), room.pk != empty.pk) == ("ops/scratch", True)
    assert set(Drawer.objects.values_list("room", flat=True)) == {room.pk}


def test_a_later_chunk_finds_the_room_it_made_again(dedup_settings, tmp_path, monkeypatch):
    """The room made again is kept for the chunks after it: looked up once more, not made
    once per record."""
    monkeypatch.setattr(chunks, "CHUNK_SIZE", 2)
    services.room_get_or_create(wing="ops", room="scratch")
    looked_up = chunks.look_up_rooms
    deleted: list[int] = []

    def look_up_then_lose(records, rooms):
        looked_up(records, rooms)
        if not deleted:
            deleted.append(rooms["ops", "scratch"].pk)
            services.room_delete(room=rooms["ops", "scratch"])

    monkeypatch.setattr(chunks, "look_up_rooms", look_up_then_lose)
    imported, tally = run(export(tmp_path, 5))
    assert imported.status == Import.Status.DONE
    assert tally.summary()["created"] == 5
    assert Room.objects.count() == 1
    assert Drawer.objects.filter(room=Room.objects.get()).count() == 5


@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_a_room_deleted_while_the_chunk_waits_for_its_writes(dedup_settings, tmp_path, monkeypatch):
    """The deletion holds the room's writes (as `room_delete` does) while the chunk, which
    looked the room up before, waits on them: once the deletion commits, the chunk finds the
    room gone and makes it again."""
    empty = services.room_get_or_create(wing="ops", room="scratch")
    looked_up = chunks.look_up_rooms
    found, holding = threading.Event(), threading.Event()

    def look_up_and_say(records, rooms):
        looked_up(records, rooms)
        found.set()

    def delete_holding_the_writes() -> None:
        try:
            with transaction.atomic():
                hold_lock(room_writes(empty.pk))
                holding.set()
                assert found.wait(timeout=30)
                time.sleep(0.3)  # the chunk waits on the room's writes meanwhile
                services.room_delete(room=empty)
        finally:
            connections.close_all()

    monkeypatch.setattr(chunks, "look_up_rooms", look_up_and_say)
    deleter = threading.Thread(target=delete_holding_the_writes)
    deleter.start()
    try:
        assert holding.wait(timeout=30)
        imported, tally = run(export(tmp_path, 3))
    finally:
        found.set()
        deleter.join(timeout=30)
    assert not Room.objects.filter(pk=empty.pk).exists()
    assert imported.status == Import.Status.DONE
    assert tally.summary()["created"] == 3
    assert imported.drawers.count() == 3
    assert Drawer.objects.filter(room__wing__name="ops", room__name="scratch").count() == 3
