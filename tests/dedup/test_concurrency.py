"""Racing writers, with real threads and real connections. PostgreSQL serialises them with
advisory locks; SQLite (IMMEDIATE transactions) takes its write lock before the first read, which
its in-memory test database cannot show across threads, so these run on PostgreSQL."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections, transaction

from dedup import locks, services
from palace.models import Drawer, Entity, EntityLink
from tests.review.lock_waits import in_thread

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


ROUNDS = 5


def race_rounds(names):
    """Each round, the entities emptied, then `WRITERS` sightings of the names, at once."""
    for _ in range(ROUNDS):
        Entity.objects.all().delete()
        race(lambda i: services.entity_resolve(name=names[i % len(names)], kind="person"))
        yield


def test_sightings_of_one_name_in_two_typo_spellings_racing_make_one_entity(dedup_settings):
    """Written one after the other, in either order, the second spelling converges on the
    first's entity (one typo). Written at once, each writer's lookup used to run before the
    other committed, and both created one: the later creator now looks again and converges."""
    for _ in race_rounds(["Ada Lovelace", "Ada Lovelase"]):
        assert Entity.objects.count() == 1


def test_resembling_names_racing_are_linked_possibly_same_as(dedup_settings):
    """Two edits apart: written one after the other they make two entities and a link between
    them; written at once, the link was missing."""
    for _ in race_rounds(["Ada Lovelace", "Adda Lovelase"]):
        assert Entity.objects.count() == 2
        assert EntityLink.objects.count() == 1


def test_creations_counted_since_the_lookup_are_told_apart_from_none(dedup_settings):
    """The bands of a key of five characters are 5, 6 and 7; each creation counts one in each."""
    with transaction.atomic():
        assert locks.creations_meanwhile(5, {}) is False  # the first: made at 1, as expected
    with transaction.atomic():
        assert locks.creations_meanwhile(5, {}) is True  # one counted since "none seen"
    with transaction.atomic():
        assert locks.creations_meanwhile(5, {5: 2, 6: 2, 7: 2}) is False


def test_an_alias_recorded_while_a_typo_of_it_is_sighted_ends_as_one_serial_order(
    dedup_settings, monkeypatch
):
    """A person's alias serves the typo rule, and a sighting one typo from it does not wait for
    its recording. That is safe: the recording reads no other entity, so the outcome is a
    serial order's. Here the alias is held between its insert and its commit while the sighting
    runs: the sighting finishes first, making its own entity, and the state after both is that
    of the sighting first, then the alias (a later sighting names that entity exactly)."""
    from dedup.services import entity_aliases as entity_services

    entity = services.entity_resolve(name="Jan Nowak", kind="person").entity
    inserted, commit = threading.Event(), threading.Event()
    real = entity_services.index_person_alias

    def index_then_wait(alias):
        real(alias)
        inserted.set()
        commit.wait(10)

    monkeypatch.setattr(entity_services, "index_person_alias", index_then_wait)
    errors: list[BaseException] = []
    recording = in_thread(
        lambda: services.entity_alias_add(entity=entity, alias="Kowalczyk"), errors
    )
    assert inserted.wait(10)
    sighted = services.entity_resolve(name="Kowalcyzk", kind="person")  # does not wait
    commit.set()
    recording.join(10)
    assert errors == []
    assert sighted.created
    assert sighted.possible == ()
    assert entity.alias_set.filter(alias="Kowalczyk").exists()
    again = services.entity_resolve(name="Kowalcyzk", kind="person")
    assert (again.entity, again.rule) == (sighted.entity, "exact")
