"""Racing writers, with real threads and real connections. PostgreSQL serialises them with
advisory locks; SQLite (IMMEDIATE transactions) takes its write lock before the first read, which
its in-memory test database cannot show across threads, so these run on PostgreSQL."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections

from dedup import services
from palace.models import Drawer, Entity

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL"
    ),
]

WRITERS = 8
TEXT = "Two agents wrote this very sentence at the very same moment, in one room."


def race(work):
    barrier = threading.Barrier(WRITERS)

    def one(index):
        try:
            barrier.wait()
            return work(index)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        return list(pool.map(one, range(WRITERS)))


def test_identical_writes_racing_store_one_drawer(dedup_settings):
    room = services.room_get_or_create(wing="race", room="room")
    results = race(lambda _: services.drawer_write(room=room, content=TEXT))
    assert Drawer.objects.filter(room=room).count() == 1
    assert sum(r.created for r in results) == 1
    assert len({r.drawer.pk for r in results}) == 1


def test_named_writes_racing_store_one_drawer(dedup_settings):
    room = services.room_get_or_create(wing="race", room="named")
    results = race(lambda _: services.drawer_write(room=room, content=TEXT, name="context"))
    assert Drawer.objects.filter(room=room).count() == 1
    assert sum(r.created for r in results) == 1


def test_first_use_of_a_room_racing_creates_it_once(dedup_settings):
    results = race(lambda i: services.drawer_write_in(wing="fresh", room="room", content=TEXT))
    assert Drawer.objects.count() == 1
    assert sum(r.created for r in results) == 1


def test_sightings_of_one_name_racing_make_one_entity(dedup_settings):
    spellings = ["Ada Lovelace", "ada lovelace", "ADA LOVELACE", "Ada  Lovelace"]
    results = race(lambda i: services.entity_resolve(name=spellings[i % 4], kind="person"))
    assert Entity.objects.count() == 1
    assert sum(r.created for r in results) == 1


def test_replays_of_one_drawer_id_racing_store_it_once(dedup_settings):
    """Mined writes keep exact copies, so only the id tells a replay from a second record."""
    import uuid

    room = services.room_get_or_create(wing="race", room="mined")
    drawer_id = uuid.uuid4()
    results = race(
        lambda _: services.drawer_write(
            room=room, content=TEXT, mode=services.WriteMode.MINED, drawer_id=drawer_id
        )
    )
    assert Drawer.objects.filter(room=room).count() == 1
    assert sum(r.created for r in results) == 1
    assert {r.drawer.uuid for r in results} == {drawer_id}
