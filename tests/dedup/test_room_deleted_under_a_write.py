"""An empty room deleted between a write finding it and the write's lock (an admin's deletion, or
an import's reversal removing the places it made) failed the drawer's foreign key at commit: a
500. The write is made again, once, into the room made again. Real threads and connections, so
PostgreSQL only (SQLite's write transaction holds the database from the room's lookup on)."""

import threading

import pytest
from django.db import IntegrityError, connection, connections, transaction
from prometheus_client import REGISTRY

from dedup import metrics, services
from dedup.services import drawers as drawer_writes
from palace.models import Drawer, Room

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL"
    ),
]


def delete_elsewhere(room: Room) -> None:
    """`room_delete` on its own connection, finished before the caller goes on."""

    def run() -> None:
        try:
            services.room_delete(room=room)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()


def test_a_write_into_a_room_deleted_under_it_is_made_again(dedup_settings, monkeypatch):
    empty = services.room_get_or_create(wing="ops", room="scratch")
    found = drawer_writes.room_get_or_create
    deleted: list[int] = []

    def find_then_lose(**names):
        room = found(**names)
        if not deleted:
            deleted.append(room.pk)
            delete_elsewhere(room)
        return room

    monkeypatch.setattr(drawer_writes, "room_get_or_create", find_then_lose)
    result = services.drawer_write_in(wing="ops", room="scratch", content="Scratch notes.")
    assert deleted == [empty.pk]
    assert result.created
    assert not Room.objects.filter(pk=empty.pk).exists()
    assert Drawer.objects.get().room.name == "scratch"


def test_inside_a_callers_transaction_the_error_is_the_callers(dedup_settings, monkeypatch):
    services.room_get_or_create(wing="ops", room="scratch")
    found = drawer_writes.room_get_or_create

    def find_then_lose(**names):
        room = found(**names)
        delete_elsewhere(room)
        return room

    monkeypatch.setattr(drawer_writes, "room_get_or_create", find_then_lose)
    with pytest.raises(IntegrityError), transaction.atomic():
        services.drawer_write_in(wing="ops", room="scratch", content="Scratch notes.")
    assert not Drawer.objects.exists()


def written(verdict: str) -> float:
    return REGISTRY.get_sample_value("castellan_drawer_writes_total", {"verdict": verdict}) or 0.0


def test_a_write_made_again_counts_once(dedup_settings, monkeypatch):
    """The first try's count is a callback run at commit (`metrics._count`), which the failed
    commit's rollback discards: the write is counted once, by the try that stored it, in the
    metrics and in the request's tally."""
    services.room_get_or_create(wing="ops", room="scratch")
    found = drawer_writes.room_get_or_create
    deleted: list[int] = []

    def find_then_lose(**names):
        room = found(**names)
        if not deleted:
            deleted.append(room.pk)
            delete_elsewhere(room)
        return room

    monkeypatch.setattr(drawer_writes, "room_get_or_create", find_then_lose)
    before = written("new")
    tally = metrics.request_tally_start()
    try:
        services.drawer_write_in(wing="ops", room="scratch", content="Scratch notes.")
    finally:
        metrics.request_tally_stop()
    assert len(deleted) == 1  # the first try failed at commit, the second stored the drawer
    assert written("new") == before + 1
    assert tally == {"new": 1}
