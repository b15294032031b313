"""Row locks a sweep takes on the drawers its rows refer to, in the canonical order of
`dedup.locks`: drawers by ascending id, in one statement, before the proposals and links that
lead to them. A drawer deletion locks the drawer first and then sets its proposals' sides to
null, so a sweep that locked proposals first and drawers after would wait on it in a cycle.

PostgreSQL only: SQLite's IMMEDIATE transactions take the database's write lock before the first
read, so nothing can change a drawer under a writer there.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection

from dedup.locks import drawers_locked
from palace.models import Drawer


def drawers_held(ids: Iterable[int]) -> set[int]:
    """Those of the drawers that still exist and are current, held until commit: FOR KEY SHARE,
    the weakest lock a DELETE waits for, so a proposal written to refer to them cannot fail at
    commit on a drawer deleted meanwhile (the foreign keys are deferred). A drawer deleted while
    this waits for it, or superseded before, is left out."""
    ordered = sorted(set(ids))
    if connection.vendor != "postgresql":
        return set(Drawer.objects.current().filter(pk__in=ordered).values_list("pk", flat=True))
    return drawers_locked(ordered, current_or=[])


def drawers_hold(ids: Iterable[int], *, any_state: Iterable[int] = (), update: bool) -> None:
    """Hold the current drawers among `ids`, and those in `any_state` whether current or not,
    until commit; `update`: FOR NO KEY UPDATE (`dedup.locks.rows_held` says why not FOR
    UPDATE), for a caller about to change some of them (a merge supersedes a side: taking the
    strong lock later, on a drawer held weakly, would wait on the other holders in a cycle),
    else FOR KEY SHARE. A superseded drawer is left out unless named
    in `any_state`: its superseder's deletion updates it after locking the superseder, so
    holding both could cycle with that deletion."""
    any_state = set(any_state)
    lock = "FOR NO KEY UPDATE" if update else "FOR KEY SHARE"
    drawers_locked(set(ids) | any_state, lock, current_or=any_state)
