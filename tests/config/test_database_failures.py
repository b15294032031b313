"""Which database errors a retry may cure (a 503 with `Retry-After`, a command's one line) and
which are faults (a 500, logged; a command's traceback): a missing table is no wait's to cure."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from django.db import InterfaceError, OperationalError

from dedup.database import database_failure


def wrapped(cause: Exception) -> OperationalError:
    """As Django raises a driver's error: its own class, the driver's as the cause."""
    error = OperationalError(str(cause))
    error.__cause__ = cause
    return error


def psycopg_error(message: str, sqlstate: str | None) -> psycopg.OperationalError:
    error = psycopg.OperationalError(message)
    error.sqlstate = sqlstate  # set by psycopg from the server's answer; None when none came
    return error


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (wrapped(sqlite3.OperationalError("database is locked")), "database_busy"),
        (wrapped(psycopg_error("deadlock detected", "40P01")), "database_busy"),
        (wrapped(psycopg_error("lock timeout", "55P03")), "database_busy"),
        (wrapped(psycopg_error("connection refused", None)), "database_unavailable"),
        (wrapped(psycopg_error("connection failure", "08006")), "database_unavailable"),
        (wrapped(psycopg_error("terminating connection", "57P01")), "database_unavailable"),
        (wrapped(sqlite3.OperationalError("unable to open database file")), "database_unavailable"),
        (InterfaceError("connection already closed"), "database_unavailable"),
    ],
)
def test_a_wait_may_cure_it(error, code):
    failure = database_failure(error)
    assert failure is not None
    assert failure[0] == code


@pytest.mark.parametrize(
    ("error", "seconds"),
    [
        (wrapped(sqlite3.OperationalError("database is locked")), 5),
        (wrapped(psycopg_error("lock timeout", "55P03")), 5),
        (wrapped(psycopg_error("deadlock detected", "40P01")), 1),
    ],
    ids=["sqlite-locked", "lock-timeout", "deadlock"],
)
def test_a_lock_waited_on_its_whole_timeout_is_retried_later(error, seconds):
    """A queue of writers as long as the lock timeout is not gone in a second (the trial:
    clients told 1 s went straight back into it); a deadlock's loser may retry at once."""
    assert database_failure(error)[2] == seconds


@pytest.mark.parametrize(
    "error",
    [
        wrapped(sqlite3.OperationalError("no such table: api_agentkey")),
        wrapped(sqlite3.OperationalError("attempt to write a readonly database")),
        wrapped(psycopg_error('relation "palace_drawer" does not exist', "42P01")),
        RuntimeError("a bug"),
    ],
)
def test_a_fault_is_no_wait_to_cure(error):
    assert database_failure(error) is None
