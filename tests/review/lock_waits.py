"""For race tests on PostgreSQL: run a write in another thread (its own connection) and wait
until it is blocked on a row lock, so a test can make a race happen at a chosen point instead of
hoping for it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from django.db import connection, connections


def lock_waiters() -> int:
    """Sessions of this database waiting for a lock."""
    with connection.cursor() as cursor:
        # Within a transaction the statistics views are read once and kept: read them afresh.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def wait_until_blocked(thread: threading.Thread, timeout: float = 5.0) -> bool:
    """True once some session waits for a lock while the thread runs; False if the thread ended
    (it was never blocked) or the timeout passed."""
    deadline = time.monotonic() + timeout
    while thread.is_alive() and time.monotonic() < deadline:
        if lock_waiters():
            return True
        time.sleep(0.02)
    return False


def in_thread(work: Callable[[], object], errors: list[BaseException]) -> threading.Thread:
    """Start `work` in a thread with its own connection; what it raises goes to `errors`."""

    def run() -> None:
        try:
            work()
        except BaseException as error:  # reported by the test
            errors.append(error)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread
