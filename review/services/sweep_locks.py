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
from django.db.models import QuerySet

from dedup.locks import hold_locks, room_writes
from palace.models import Drawer


def drawers_held(ids: Iterable[int]) -> set[int]:
    """Those of the drawers that still exist and are current, held until commit: FOR KEY SHARE,
    the weakest lock a DELETE and a supersession wait for, so a proposal written to refer to
    them cannot fail at commit on a drawer deleted meanwhile (the foreign keys are deferred).
    A drawer deleted or superseded while this waits for it is left out."""
    ordered = sorted(set(ids))
    if not ordered:
        return set()
    if connection.vendor != "postgresql":
        return set(Drawer.objects.current().filter(pk__in=ordered).values_list("pk", flat=True))
    return _locked(ordered, [], "FOR KEY SHARE")


def drawers_hold(ids: Iterable[int], *, any_state: Iterable[int] = (), update: bool) -> None:
    """Hold the current drawers among `ids`, and those in `any_state` whether current or not,
    until commit; `update`: FOR NO KEY UPDATE (`dedup.locks.rows_held` says why not FOR
    UPDATE), for a caller about to change some of them (a merge supersedes a side: taking the
    strong lock later, on a drawer held weakly, would wait on the other holders in a cycle),
    else FOR KEY SHARE. A superseded drawer is left out unless named
    in `any_state`: its superseder's deletion updates it after locking the superseder, so
    holding both could cycle with that deletion."""
    if connection.vendor != "postgresql":
        return
    any_state = sorted(set(any_state))
    ordered = sorted(set(ids) | set(any_state))
    if not ordered:
        return
    _locked(ordered, any_state, "FOR NO KEY UPDATE" if update else "FOR KEY SHARE")


def rooms_hold(drawers: QuerySet[Drawer]) -> None:
    """The write path's locks of these drawers' rooms (`dedup.locks`: the rooms' writes before
    the drawers' row locks), for a caller that may make one current again: `make_current` takes
    that lock after it holds the drawer, which is then a lock already held, not a wait in the
    wrong order."""
    if connection.vendor != "postgresql":
        return
    rooms = drawers.values_list("room_id", flat=True).distinct()
    hold_locks(room_writes(room) for room in rooms)


def _locked(ids: list[int], any_state: list[int], lock: str) -> set[int]:
    # ORDER BY under the row lock: PostgreSQL sorts, then locks the rows in that order.
    # `= ANY(array)` keeps it one parameter however many drawers a run names.
    sql = (
        f"SELECT id FROM {Drawer._meta.db_table} WHERE id = ANY(%s::bigint[])"
        " AND (valid_to IS NULL OR id = ANY(%s::bigint[]))"
        f" ORDER BY id {lock}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [ids, any_state])
        return {pk for (pk,) in cursor.fetchall()}
