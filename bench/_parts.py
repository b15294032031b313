"""Where a call's time goes: each statement it runs (named by the first pattern its text holds),
timed around Django's cursor and the fetches of its rows, the commit, and the rest (Python).

Instrumenting costs about 14 us a statement on SQLite, and more for a call that runs more
statements, so a benchmark measures its headline times without it and its parts in a pass of
their own.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

OTHER, COMMIT, REST = "other statements", "commit", "the rest"


def part_names(patterns: Sequence[tuple[str, str]]) -> list[str]:
    """The parts a `Parts` over these patterns reports, in order."""
    return [*dict.fromkeys(name for _, name in patterns), OTHER, COMMIT, REST]


class Parts(dict):
    """While entered: the seconds the default connection spends in each part of what it runs,
    added up since the last `clear()`. A statement's part is the name of the first (text, name)
    pattern whose text it holds; SQLite computes a SELECT's rows as they are fetched, so the
    fetches count with the statement that made them. On PostgreSQL the transaction's BEGIN,
    which psycopg sends before its first statement, counts with that statement."""

    def __init__(self, patterns: Sequence[tuple[str, str]]):
        super().__init__()
        self._patterns = patterns

    def __enter__(self) -> Parts:
        from django.db import connection

        self._wrapper = connection.execute_wrapper(self._statement)
        self._wrapper.__enter__()
        connection.ensure_connection()
        wrapped = connection._commit  # type: ignore[attr-defined]  # every commit's private hook

        def commit():
            started = time.perf_counter()
            try:
                return wrapped()
            finally:
                self._add(COMMIT, started)

        connection._commit = commit  # type: ignore[attr-defined]  # the instance's, not the class's
        return self

    def __exit__(self, *exc) -> None:
        from django.db import connection

        del connection._commit  # type: ignore[attr-defined]
        self._wrapper.__exit__(*exc)

    def with_rest(self, wall: float) -> dict[str, float]:
        """The parts added up, and the rest of a call that took `wall` seconds."""
        return {**self, REST: wall - sum(self.values())}

    def _statement(self, execute, sql, params, many, context):
        part = next((name for text, name in self._patterns if text in sql), OTHER)
        driver = context["cursor"].cursor
        if not getattr(driver, "_timed_part", None):  # its fetches wrapped once, whatever it runs
            for name in ("fetchone", "fetchmany", "fetchall"):
                setattr(driver, name, self._fetch(driver, getattr(driver, name)))
        driver._timed_part = part  # the fetches that follow are this statement's
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self._add(part, started)

    def _fetch(self, driver, fetch):
        def timed_fetch(*args):
            started = time.perf_counter()
            try:
                return fetch(*args)
            finally:
                self._add(driver._timed_part, started)

        return timed_fetch

    def _add(self, part: str, started: float) -> None:
        self[part] = self.get(part, 0.0) + time.perf_counter() - started


def trimmed_means(
    totals: list[float], parts: list[dict[str, float]], names: Sequence[str]
) -> dict[str, float]:
    """Each part's mean ms over the calls but the slowest tenth (where a WAL checkpoint or a
    stall lands), so that the parts add up to the mean of those calls."""
    kept = sorted(range(len(totals)), key=totals.__getitem__)[: max(1, len(totals) * 9 // 10)]
    return {name: sum(parts[i].get(name, 0.0) for i in kept) / len(kept) * 1000 for name in names}
