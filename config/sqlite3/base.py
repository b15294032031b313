"""SQLite, with its writers queued fairly inside each process.

A write transaction starts with `BEGIN IMMEDIATE` (the `transaction_mode` setting), which takes
SQLite's one write lock. When it is held, SQLite's own busy handler makes the others sleep and
retry, with back-offs of up to 100 ms: under load, a writer that keeps losing the retry can wait
out the whole `timeout` while others that arrived later get through, and its request fails
(measured with 32 clients on one server: dozens of 20-second waits). Here the threads of one
process first queue on a lock of their own, in arrival order, and only the head of the queue asks
SQLite; so the busy handler sees one writer per process instead of one per thread. Waiting longer
than `timeout` is the same "database is locked" error as before (answered 503 `database_busy`).

Hand-written because no maintained package does this for Django's SQLite backend; the queue
overrides the three points where Django's SQLite wrapper opens and ends a transaction.

Its cursors also remember how each statement's `%s` placeholders were rewritten to SQLite's `?`
(`CursorWrapper`): Django runs a regular expression over the whole text of every statement it
executes, 43 us for the write path's 2,500-character candidate query on this project's machine,
against a dictionary lookup once seen. The text of a statement holds no values (they are
parameters), so a few hundred texts cover what an app runs.

And the write-ahead log is checkpointed once a request is done rather than inside a commit
(`checkpoint_if_due`). SQLite checkpoints on its own in the commit that takes the log past
`wal_autocheckpoint` pages (1,000): it writes every page since back into the database file and
`fsync`s it, about 20 us a random page on this project's machine. At 1,000,000 entities that
added 20 to 30 ms to the write of about one new entity in fifty (README, Entities), the whole of
their p99. Django calls every connection's `close_if_unusable_or_obsolete` as a request ends
(after its response is sent) and between `db_worker`'s tasks: there, once this process's
connections have changed CHECKPOINT_AFTER_CHANGES rows since its last checkpoint, a PASSIVE one
is made (it waits for no reader or writer). SQLite's own stays as it was, for whatever runs
outside requests and tasks. An MCP tool call releases its connections before its result goes
back (`api.mcp_server.calls.tool`), so a checkpoint due then is still paid inside the call, as
SQLite's own was.
"""

from __future__ import annotations

import logging
import threading
from functools import lru_cache
from typing import Any

from django.db.backends.sqlite3 import base

logger = logging.getLogger("castellan.db")

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()

# Rows changed by one process's connections after which its next request's end makes a
# checkpoint: a fifth of the pages that take the log to SQLite's own, so that one seldom comes
# first. A rough measure of the log's pages: a new entity's signature rows land on a random page
# each, but a drawer's full-text rows count too (a drawer's insert counts about 11), and so do
# rows rolled back; each process counts its own. Checkpoints then come sooner, each smaller.
CHECKPOINT_AFTER_CHANGES = 200
_unwritten: dict[str, int] = {}  # per database file: rows changed since this process's last
_unwritten_guard = threading.Lock()


def _writer_lock(name: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(name, threading.Lock())


@lru_cache(maxsize=1024)
def _qmark_style(query: str) -> str:
    """Django's own rewrite of a "format" style statement (`SQLiteCursorWrapper.convert_query`)."""
    return base.FORMAT_QMARK_REGEX.sub("?", query).replace("%%", "%")


class CursorWrapper(base.SQLiteCursorWrapper):
    def convert_query(self, query: str, *, param_names: Any = None) -> str:
        if param_names is None:
            return _qmark_style(query)
        return super().convert_query(query, param_names=param_names)


class DatabaseWrapper(base.DatabaseWrapper):
    # django-stubs does not declare the private hooks overridden here, hence their ignores.
    _holds_writer_lock = False
    _changes_counted = 0  # the connection's `total_changes` already added to `_unwritten`

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        connection = super().get_new_connection(conn_params)
        self._changes_counted = 0
        return connection

    def create_cursor(self, name: str | None = None) -> Any:
        return self.connection.cursor(factory=CursorWrapper)

    def close_if_unusable_or_obsolete(self) -> None:
        # Called as a request starts and as it ends, after its response (and between tasks).
        self.checkpoint_if_due()
        super().close_if_unusable_or_obsolete()

    def checkpoint_if_due(self) -> bool:
        """Make a PASSIVE checkpoint of the write-ahead log if this process's connections to
        the database have changed CHECKPOINT_AFTER_CHANGES rows since its last; whether one was
        made. Nothing inside a transaction. A failure is logged, never raised: SQLite's own
        checkpoint still comes."""
        if self.connection is None or self.errors_occurred or not self.get_autocommit():
            return False  # (Django's own check, after this, drops a connection that failed)
        name = str(self.settings_dict["NAME"])
        try:
            changes = self.connection.total_changes
        except self.Database.Error:
            return False
        with _unwritten_guard:
            unwritten = _unwritten.get(name, 0) + changes - self._changes_counted
            due = unwritten >= CHECKPOINT_AFTER_CHANGES
            _unwritten[name] = 0 if due else unwritten
        self._changes_counted = changes
        if not due:
            return False
        try:
            self.connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except self.Database.Error:
            logger.warning("write-ahead log checkpoint failed", exc_info=True)
            return False
        return True

    def checkpoint_whole_log(self) -> bool:
        """Write the whole write-ahead log back into the database file and empty it (a TRUNCATE
        checkpoint: it waits for the other writers, up to the busy timeout), after a bulk job
        (`dedup_maintain`): the file shrinks back, where SQLite's own checkpoints leave it at
        the largest size a job took it to (10 MB after merging the full-text index of 100,000
        drawers), and the job's pages are on disk before the next request. Whether the
        log is empty now: False if a reader still needs it (its pages are written back once it
        is done), and, with nothing done, inside a transaction."""
        if not self.get_autocommit():
            return False
        with self.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            busy, _, _ = cursor.fetchone()
        self._changes_counted = self.connection.total_changes
        with _unwritten_guard:
            _unwritten[str(self.settings_dict["NAME"])] = 0
        return not busy

    def _start_transaction_under_autocommit(self) -> None:
        lock = _writer_lock(str(self.settings_dict["NAME"]))
        timeout = float(self.settings_dict.get("OPTIONS", {}).get("timeout", 5))
        if not lock.acquire(timeout=timeout):
            with self.wrap_database_errors:
                raise self.Database.OperationalError("database is locked")
        self._holds_writer_lock = True
        try:
            super()._start_transaction_under_autocommit()  # type: ignore[misc]  # a private hook
        except BaseException:
            self._release_writer_lock()
            raise

    def _commit(self) -> Any:
        # A failed commit is rolled back, which releases.
        result = super()._commit()  # type: ignore[misc]  # a private hook
        self._release_writer_lock()
        return result

    def _rollback(self) -> Any:
        try:
            return super()._rollback()  # type: ignore[misc]  # a private hook
        finally:
            self._release_writer_lock()

    def _close(self) -> Any:
        try:
            return super()._close()  # type: ignore[misc]  # a private hook
        finally:
            self._release_writer_lock()

    def _release_writer_lock(self) -> None:
        if self._holds_writer_lock:
            self._holds_writer_lock = False
            _writer_lock(str(self.settings_dict["NAME"])).release()
