"""A request waits a bounded time for another's lock (`CASTELLAN_LOCK_TIMEOUT`): a burst of slow
writes into one room left every web thread waiting on the room's lock on PostgreSQL, unanswered
for minutes (the concurrency trial), where SQLite's busy timeout answered 503 `database_busy`."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections, transaction

from dedup import locks
from dedup import services as write
from tests.api.conftest import api_client
from tests.config.test_settings import manage

on_postgres = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PostgreSQL's lock_timeout"
)


@on_postgres
@pytest.mark.django_db
def test_the_app_s_postgresql_connections_wait_for_a_lock_twenty_seconds():
    with connection.cursor() as cursor:
        cursor.execute("SHOW lock_timeout")
        assert cursor.fetchone()[0] == "20s"


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_a_write_waiting_past_it_for_its_room_is_answered_busy(world):
    room = write.room_get_or_create(wing="ops", room="dev")
    held, done = threading.Event(), threading.Event()

    def holder() -> None:  # another request's write into the room, taking its time
        try:
            with transaction.atomic():
                locks.hold_lock(locks.room_writes(room.pk))
                held.set()
                done.wait(10)
        finally:
            connections.close_all()

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(10)
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '200ms'")  # this session's, for a short test
        response = api_client(world).post(
            "/api/wings/ops/rooms/dev/drawers",
            {"content": "A write that waits for the room."},
            content_type="application/json",
        )
    finally:
        done.set()
        thread.join()
    assert response.status_code == 503
    assert response.json()["code"] == "database_busy"
    assert response["Retry-After"]


@pytest.mark.parametrize("value", ["0", "-5", "soon"])
def test_a_lock_timeout_that_is_no_positive_number_refuses_to_start(value):
    result = manage("check", CASTELLAN_LOCK_TIMEOUT=value)
    assert result.returncode != 0
    assert "CASTELLAN_LOCK_TIMEOUT" in result.stderr
