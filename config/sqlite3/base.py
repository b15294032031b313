"""SQLite, with its writers queued fairly inside each process.

A write transaction starts with `BEGIN IMMEDIATE` (the `transaction_mode` setting), which takes
SQLite's one write lock. When it is held, SQLite's own busy handler makes the others sleep and
retry, with back-offs of up to 100 ms: under load, a writer that keeps losing the retry can wait
out the whole `timeout` while others that arrived later get through, and its request fails
(measured with 32 clients on one server: dozens of 20-second waits). Here the threads of one
process first queue on a lock of their own, in arrival order, and only the head of the queue asks
SQLite; so the busy handler sees one writer per process instead of one per thread. Waiting longer
than `timeout` is the same "database is locked" error as before (answered 503 `database_busy`).

Hand-written because no maintained package does this for Django's SQLite backend; it overrides the
three points where Django's SQLite wrapper opens and ends a transaction, nothing else.

Its cursors also remember how each statement's `%s` placeholders were rewritten to SQLite's `?`
(`CursorWrapper`): Django runs a regular expression over the whole text of every statement it
executes, 43 us for the write path's 2,500-character candidate query on this project's machine,
against a dictionary lookup once seen. The text of a statement holds no values (they are
parameters), so a few hundred texts cover what an app runs.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

from django.db.backends.sqlite3 import base

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


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

    def create_cursor(self, name: str | None = None) -> Any:
        return self.connection.cursor(factory=CursorWrapper)

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
