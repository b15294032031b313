"""SQLite's write-ahead log is checkpointed as a request (or a task) ends, once the process has
changed enough rows, rather than inside the commit that fills it (config/sqlite3)."""

import os
import sqlite3

import pytest
from django.db.utils import ConnectionHandler

from config.sqlite3 import base as sqlite_base

LIMIT = sqlite_base.CHECKPOINT_AFTER_CHANGES


@pytest.fixture(autouse=True)
def own_database(django_db_blocker):
    """These connections are to a file of the test's own, not the test database."""
    with django_db_blocker.unblock():
        yield


@pytest.fixture
def path(tmp_path):
    """A database file, held open by another connection all along: SQLite checkpoints on its
    own when the last connection to a file closes, which would hide what is tested."""
    path = tmp_path / "checkpoints.sqlite3"
    holder = sqlite3.connect(path)
    holder.execute("PRAGMA journal_mode=WAL")
    holder.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, value TEXT)")
    holder.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    yield path
    holder.close()


def wrapper(path):
    """A connection as the app's settings make one (the backend, WAL, IMMEDIATE), each request's
    own (closed when it ends: CONN_MAX_AGE 0)."""
    settings = {
        "ENGINE": "config.sqlite3",
        "NAME": str(path),
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
    }
    return ConnectionHandler({"default": settings})["default"]


def change(connection, rows: int) -> None:
    with connection.cursor() as cursor:
        cursor.executemany("INSERT INTO t (value) VALUES (%s)", [("x" * 200,)] * rows)


def test_a_checkpoint_is_made_once_the_process_changed_enough_rows(path):
    connection = wrapper(path)
    change(connection, LIMIT - 1)
    written = os.path.getsize(path)
    assert connection.checkpoint_if_due() is False
    assert os.path.getsize(path) == written  # the rows are in the log only
    change(connection, 1)
    assert connection.checkpoint_if_due() is True
    assert os.path.getsize(path) > written  # now in the database file
    assert connection.checkpoint_if_due() is False  # counted from there
    connection.close()


def test_the_rows_of_connections_closed_since_count(path):
    first = wrapper(path)
    change(first, LIMIT // 2)
    first.close_if_unusable_or_obsolete()  # a request's end: counted, then closed
    assert first.connection is None
    second = wrapper(path)
    change(second, LIMIT // 2)
    written = os.path.getsize(path)
    second.close_if_unusable_or_obsolete()
    assert os.path.getsize(path) > written


def test_nothing_is_checkpointed_inside_a_transaction(path):
    connection = wrapper(path)
    change(connection, LIMIT)
    connection.set_autocommit(False)
    assert connection.checkpoint_if_due() is False
    connection.rollback()
    connection.set_autocommit(True)
    change(connection, LIMIT)
    assert connection.checkpoint_if_due() is True
    connection.close()


def test_a_connection_never_opened_checkpoints_nothing(path):
    assert wrapper(path).checkpoint_if_due() is False


def test_a_connection_that_failed_is_left_to_django_s_own_check(path):
    connection = wrapper(path)
    change(connection, LIMIT)
    connection.errors_occurred = True
    assert connection.checkpoint_if_due() is False
    connection.errors_occurred = False
    assert connection.checkpoint_if_due() is True
    connection.close()


def test_the_whole_log_is_written_back_and_emptied_after_a_bulk_job(path):
    """`dedup_maintain` ends with it: the next request's end has nothing of the job to copy."""
    connection = wrapper(path)
    change(connection, LIMIT * 3)
    assert os.path.getsize(f"{path}-wal") > 0
    assert connection.checkpoint_whole_log() is True
    assert os.path.getsize(f"{path}-wal") == 0
    assert connection.checkpoint_if_due() is False  # what it wrote back is counted
    connection.close()


def test_a_log_still_read_is_not_emptied(path):
    reader = sqlite3.connect(path)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM t").fetchall()  # holds a snapshot
    connection = wrapper(path)
    change(connection, 10)
    assert connection.checkpoint_whole_log() is False
    reader.rollback()
    assert connection.checkpoint_whole_log() is True
    reader.close()
    connection.close()


def test_the_whole_log_is_left_alone_inside_a_transaction(path):
    connection = wrapper(path)
    change(connection, 10)
    connection.set_autocommit(False)
    assert connection.checkpoint_whole_log() is False
    connection.rollback()
    connection.set_autocommit(True)
    assert os.path.getsize(f"{path}-wal") > 0
    connection.close()
