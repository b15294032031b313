"""The database connection of the hot paths, found once per call, and what a failure of it means
to a caller outside: a busy database is worth a retry soon, an unreachable one a little later."""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

# SQLSTATEs of a transient conflict (serialisation failure, deadlock, lock not available).
BUSY_SQLSTATES = ("40001", "40P01", "55P03")
# SQLSTATEs of a server going away (an administrator's or a crash's shutdown, "cannot connect now").
LOST_SQLSTATES = ("57P01", "57P02", "57P03")
RETRY_AFTER_BUSY = 1
# A lock waited on for the whole CASTELLAN_LOCK_TIMEOUT (PostgreSQL's 55P03, SQLite's "locked"):
# a queue of writers that long is not gone in a second, where a deadlock's loser may retry now.
RETRY_AFTER_LOCKED = 5
RETRY_AFTER_UNAVAILABLE = 5


def default_connection() -> BaseDatabaseWrapper:
    """This thread's default connection itself. `django.db.connection` is a proxy that finds it
    again at every attribute read (2.7 us each, through asgiref's `Local`): a new entity's write
    read about 45 of them, 0.12 ms of it. The inserts and the entity lookups find it once per
    call and pass it on, to the fields' value preparation too."""
    return connections[DEFAULT_DB_ALIAS]


def database_failure(exception: BaseException) -> tuple[str, str, int] | None:
    """(code, message, Retry-After seconds) for a database error a retry may cure: SQLite's
    "database is locked", a PostgreSQL lock timeout, deadlock or serialisation failure is
    `database_busy`; a connection that cannot be made or was lost (PostgreSQL's connection
    errors carry no SQLSTATE or one of class 08 or 57P01-03; SQLite's file that cannot be
    opened) `database_unavailable`. None for anything else: a missing table, a read-only file,
    a malformed database are no wait's to cure, and are reported as the faults they are."""
    if not isinstance(exception, OperationalError | InterfaceError):
        return None
    cause = exception.__cause__
    sqlstate = getattr(cause, "sqlstate", None) or ""
    locked = "is locked" in str(exception) or sqlstate == "55P03"  # waited its whole timeout
    if locked or sqlstate in BUSY_SQLSTATES:
        wait = RETRY_AFTER_LOCKED if locked else RETRY_AFTER_BUSY
        return "database_busy", "The database is busy; retry shortly.", wait
    unavailable = (
        isinstance(exception, InterfaceError)  # a connection closed under it
        or (
            hasattr(cause, "sqlstate")  # psycopg's
            and (not sqlstate or sqlstate.startswith("08") or sqlstate in LOST_SQLSTATES)
        )
        or "unable to open" in str(exception)  # SQLite's
    )
    if not unavailable:
        return None
    return (
        "database_unavailable",
        "The database is unavailable; retry shortly.",
        RETRY_AFTER_UNAVAILABLE,
    )
