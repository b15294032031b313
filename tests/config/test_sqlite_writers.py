"""SQLite's writers of one process queue on a lock of their own, in arrival order, before asking
SQLite for its write lock (config/sqlite3): a waiting writer is not starved by later ones."""

import threading
import time

import pytest
from django.db import OperationalError, connection, connections, transaction

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's write lock"),
]


def in_thread(work) -> threading.Thread:
    def run():
        try:
            work()
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_writers_of_one_process_take_turns_in_arrival_order():
    order: list[str] = []
    first_in = threading.Event()

    def writer(name: str, hold: float):
        def work():
            with transaction.atomic():
                order.append(f"{name} in")
                first_in.set()
                time.sleep(hold)
                order.append(f"{name} out")

        return work

    first = in_thread(writer("first", 0.3))
    first_in.wait(5)
    second = in_thread(writer("second", 0))
    time.sleep(0.05)
    third = in_thread(writer("third", 0))
    for thread in (first, second, third):
        thread.join(10)
    assert order == ["first in", "first out", "second in", "second out", "third in", "third out"]


def test_a_writer_waiting_past_the_timeout_gets_database_is_locked(monkeypatch):
    monkeypatch.setitem(connection.settings_dict, "OPTIONS", {"timeout": 0.2})
    held = threading.Event()
    release = threading.Event()

    def holder():
        with transaction.atomic():
            held.set()
            release.wait(5)

    thread = in_thread(holder)
    held.wait(5)
    try:
        with pytest.raises(OperationalError, match="locked"), transaction.atomic():
            pass
    finally:
        release.set()
        thread.join(5)


def test_the_lock_is_released_after_a_rollback():
    with pytest.raises(RuntimeError), transaction.atomic():
        raise RuntimeError("rolled back")
    finished = threading.Event()

    def writer():
        with transaction.atomic():
            finished.set()

    in_thread(writer).join(5)
    assert finished.is_set()
