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
from django.db.models import Q, QuerySet
from django.utils import timezone

from dedup.locks import drawers_locked, lock_key, room_writes_held, rows_held
from palace.models import Drawer, Entity
from review.models import Proposal, SweepJob, SweepRun
from review.selectors.sweeps import STUCK_AFTER


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


def applied_sides_held(run: SweepRun, applied: QuerySet[Proposal]) -> None:
    """Hold the sides of the run's applied pairs, before any of its proposals is locked (the
    canonical order: drawers or entities, by id, then proposals, then links). A deletion of a
    drawer locks it, then sets its proposals' sides to null; a curator's decision on a link
    holds its sides, then the link, and deleting the link sets the applied link of its proposal
    to null: a reverse that locked the proposals first deadlocked with either.

    A drawer run: the rooms' write locks first, for a merged-away drawer made current again, then
    the drawers FOR NO KEY UPDATE (undoing a merge updates both sides). An entity run: the
    entities FOR NO KEY UPDATE, as `dedup.locks.link_held` holds a link's sides, so a decision on
    one of the run's links and the reverse queue at the first entity they share."""
    if run.entities:
        sides = applied.values_list("newer_entity_id", "older_entity_id")
        rows_held(Entity, [pk for pair in sides for pk in pair if pk is not None])
        return
    drawers = Drawer.objects.filter(
        Q(pk__in=applied.values("newer_drawer_id")) | Q(pk__in=applied.values("older_drawer_id"))
    )
    room_writes_held(drawers)
    drawers_hold([], any_state=drawers.values_list("pk", flat=True), update=True)


def worker_lock(job_id: int) -> int:
    """The key of the session lock a worker holds while it does the job
    (`sweep_jobs._worker_holding`)."""
    return lock_key("sweep-job", job_id)


def worker_gone(job: SweepJob) -> bool:
    """The job is marked running but its worker stopped: on PostgreSQL its session lock is free
    (`sweep_jobs._worker_holding`); on SQLite (no session locks) it has run longer than
    STUCK_AFTER."""
    if job.status != SweepJob.Status.RUNNING:
        return False
    if connection.vendor != "postgresql":
        return job.started_at is not None and timezone.now() - job.started_at > STUCK_AFTER
    key = worker_lock(job.pk)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
        free = bool(cursor.fetchone()[0])
        if free:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])
    return free
