"""A sweep in parallel parts: `plan` splits a run into parts (a room; a diary per agent; a big
room, or the entities, into id ranges of `PART_SIZE` rows), `run_part` sweeps one part a batch at
a time, and the run is done when every part is.

Any number of workers (`manage.py db_worker`) may run parts, even the same part: a batch is
compared outside any transaction (so no lock is held while it reads: on SQLite a sweep does not
hold the write lock for a batch's candidate queries), then written in a short transaction that
locks its part's row (`SELECT ... FOR UPDATE` on PostgreSQL; SQLite's IMMEDIATE transactions
serialise writers), checks that `last_pk` is still the one the batch started from (else another
worker did it, and it is dropped), and commits the proposals together with the part's new
`last_pk`, `done`, `compared` and `counts`. A crash loses only the uncommitted batch, which the
next run of the part does again (proposals also have unique keys, so nothing is proposed twice).
The run's done and compared are summed from its parts in one statement; its counts are read,
added to and written back under the run's row lock a batch at a time (summing every part's at
each batch would grow with the parts), and summed from the parts when the run is done."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from django.db import IntegrityError, transaction
from django.db.models import OuterRef, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from dedup.candidates.sweep_rooms import Rooms
from dedup.database import database_failure
from dedup.errors import Conflict
from palace.models import Entity
from review.models import UNFINISHED_RUNS, SweepPart, SweepRun
from review.services import sweep_scan

logger = logging.getLogger("castellan.sweeps")
BUSY_RETRIES = 5  # a busy batch's tries again (`_step_retried`), each pause longer

PART_SIZE = 50_000  # rows of one scope in a part: a big room is split into id ranges of this many
Batch = Callable[[int], None]  # told the rows each committed batch did


def plan(run: SweepRun) -> list[SweepPart]:
    """The run's parts, made the first time (the same every time: planning twice, even at once,
    adds nothing). The run's total is the sum of its parts'."""
    existing = list(run.parts.order_by("number"))
    if existing:
        return existing
    if run.entities:
        scopes: list[tuple[sweep_scan.candidates.Scope | None, QuerySet]] = [
            (None, Entity.objects.filter(redirect_to__isnull=True))
        ]
    else:
        scopes = [(scope, scope.drawers()) for scope in sweep_scan.scopes(run)]
    parts: list[SweepPart] = []
    for scope, rows in scopes:
        for low, high, count in id_ranges(rows, PART_SIZE):
            parts.append(
                SweepPart(
                    run=run,
                    number=len(parts),
                    room=scope.room if scope else None,
                    agent=scope.agent if scope else None,
                    low_pk=low,
                    high_pk=high,
                    total=count,
                )
            )
    with transaction.atomic():
        SweepPart.objects.bulk_create(parts, ignore_conflicts=True)
        SweepRun.objects.filter(pk=run.pk).update(total=sum(part.total for part in parts))
    run.total = sum(part.total for part in parts)
    return list(run.parts.order_by("number"))


def id_ranges(rows: QuerySet, size: int) -> Iterator[tuple[int, int, int]]:
    """(first id, first id of the next range, rows) covering the rows in order, `size` each:
    consecutive ranges meet, so every row is in exactly one."""
    first: int | None = None
    count = last = 0
    for pk in rows.order_by("pk").values_list("pk", flat=True).iterator(chunk_size=10_000):
        if count == size:
            assert first is not None
            yield first, pk, count
            first, count = None, 0
        if first is None:
            first = pk
        count += 1
        last = pk
    if first is not None:
        yield first, last + 1, count


def run_part(part_id: int, *, batch_done: Batch = lambda rows: None) -> SweepRun:
    """Sweep a part to its end (or until another worker holds it), then finish the run if every
    part is done. Safe to call again after a crash, or from several workers at once."""
    run_id = SweepPart.objects.values_list("run_id", flat=True).get(pk=part_id)
    SweepRun.objects.filter(pk=run_id, status=SweepRun.Status.QUEUED).update(
        status=SweepRun.Status.RUNNING, started_at=timezone.now()
    )
    rooms = Rooms()  # the part's room, held in memory from batch to batch
    try:
        while (stepped := _step_retried(part_id, rooms)).rows:
            if stepped.rows > 0:
                refresh_progress(run_id, stepped.counts)
                batch_done(stepped.rows)
    except Exception as error:
        _fail(part_id, run_id, error)
        raise
    return finish(run_id)


class Stepped(NamedTuple):
    """What a batch did (`_step`): its rows (0 when the part is done; -1 when another worker did
    them first) and the proposals it made, by tier."""

    rows: int
    counts: dict[str, int]


def _step_retried(part_id: int, rooms: Rooms) -> Stepped:
    """`_step`, tried again after a pause when the database was busy (a lock waited on past
    CASTELLAN_LOCK_TIMEOUT, behind an apply or an import; a deadlock), BUSY_RETRIES times, the
    last try's failure failing the run: a batch is idempotent, and a busy moment must not fail
    a sweep of a million."""
    for attempt in range(1, BUSY_RETRIES + 1):
        try:
            return _step(part_id, rooms)
        except Exception as error:
            busy = database_failure(error)
            if busy is None or busy[0] != "database_busy":
                raise
            logger.warning("sweep part %s: %s; its batch again, try %s", part_id, error, attempt)
            time.sleep(busy[2] * attempt)
    return _step(part_id, rooms)


def _step(part_id: int, rooms: Rooms | None = None) -> Stepped:
    """One batch of the part: compared outside any transaction, then written in one, under the
    part's row lock, only if no other worker did the batch meanwhile (`last_pk` unchanged)."""
    part = SweepPart.objects.get(pk=part_id)
    if part.status == SweepPart.Status.DONE:
        return Stepped(0, {})
    run = SweepRun.objects.get(pk=part.run_id)
    scanned = sweep_scan.scan_batch(run, part, rooms)
    with transaction.atomic():
        locked = SweepPart.objects.select_for_update().get(pk=part_id)
        if locked.status == SweepPart.Status.DONE or locked.last_pk != part.last_pk:
            return Stepped(-1, {})
        if scanned.rows == 0:
            locked.status = SweepPart.Status.DONE
            locked.save(update_fields=["status"])
            return Stepped(0, {})
        scanned.write()
        locked.status, locked.error, locked.last_pk = (
            SweepPart.Status.RUNNING,
            "",
            scanned.last_pk,
        )
        locked.done += scanned.rows
        locked.compared += scanned.tally.compared
        locked.counts = merged([locked.counts, scanned.tally.counts])
        locked.save(update_fields=["status", "error", "last_pk", "done", "compared", "counts"])
        return Stepped(scanned.rows, scanned.tally.counts)


def merged(counts: list[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for each in counts:
        for tier, count in each.items():
            total[tier] = total.get(tier, 0) + count
    return total


def refresh_progress(run_id: int, counts: dict[str, int]) -> None:
    """The run's done and compared, summed from its parts by the database, and its proposals so
    far by tier, a batch's `counts` added under the run's row lock (its page and the API show
    them while it runs; summing every part's at each batch would grow with the parts). A crash
    between a batch's commit and this leaves them short until `finish` sums the parts'."""

    def summed(column: str) -> Coalesce:
        parts = SweepPart.objects.filter(run=OuterRef("pk")).values("run")
        return Coalesce(Subquery(parts.annotate(total=Sum(column)).values("total")), 0)

    with transaction.atomic():
        run = (
            SweepRun.objects.select_for_update(no_key=True).only("counts", "status").get(pk=run_id)
        )
        if run.status == SweepRun.Status.DONE:  # `finish` summed the parts': this one included
            return
        SweepRun.objects.filter(pk=run_id).update(
            done=summed("done"), compared=summed("compared"), counts=merged([run.counts, counts])
        )


def finish(run_id: int) -> SweepRun:
    """Mark the run done, with the sums of its parts, once every part is; under the run's row
    lock, so two workers finishing their last parts at once finish it once."""
    with transaction.atomic():
        run = SweepRun.objects.select_for_update(no_key=True).get(pk=run_id)
        parts = list(run.parts.values("status", "done", "compared", "counts"))
        if run.status == SweepRun.Status.DONE or any(
            part["status"] != SweepPart.Status.DONE for part in parts
        ):
            return run
        run.done = sum(part["done"] for part in parts)
        run.compared = sum(part["compared"] for part in parts)
        run.counts = merged([part["counts"] for part in parts])
        run.status, run.error, run.finished_at = SweepRun.Status.DONE, "", timezone.now()
        run.save(update_fields=["done", "compared", "counts", "status", "error", "finished_at"])
    logger.info("sweep %s done: %s", run.pk, found(run))
    return run


def found(run: SweepRun) -> str:
    """What a finished run found, for its log line: "9 proposals (exact 3, near 6); 12 drawers
    read, 40 pairs compared", or "0 proposals; ..." (its counts alone, "{}", said nothing)."""

    def counted(count: int, one: str, many: str) -> str:
        return f"{count} {one if count == 1 else many}"

    tiers = ", ".join(f"{tier} {count}" for tier, count in run.counts.items() if count)
    read = ("entity", "entities") if run.entities else ("drawer", "drawers")
    return (
        f"{counted(sum(run.counts.values()), 'proposal', 'proposals')}"
        f"{f' ({tiers})' if tiers else ''}; {counted(run.done, *read)} read, "
        f"{counted(run.compared, 'pair', 'pairs')} compared"
    )


def _fail(part_id: int, run_id: int, error: Exception) -> None:
    SweepPart.objects.filter(pk=part_id).update(status=SweepPart.Status.FAILED, error=str(error))
    SweepRun.objects.filter(pk=run_id).update(
        status=SweepRun.Status.FAILED, error=str(error), finished_at=timezone.now()
    )
    logger.exception("sweep %s, part %s failed", run_id, part_id)


def resume(run: SweepRun) -> list[SweepPart]:
    """Queue a failed or interrupted run's unfinished parts again; each resumes after the last
    batch it committed. The caller enqueues them (`review.tasks.run_sweep_part`)."""
    parts = plan(run)
    unfinished = [part for part in parts if part.status != SweepPart.Status.DONE]
    if run.status != SweepRun.Status.DONE:
        requeue(run)
    return unfinished


def requeue(run: SweepRun) -> None:
    """Mark a run queued again (a failed one too: it holds its scope again), refused as
    `under_way` if another run of its scope is queued or running since."""
    try:
        with transaction.atomic():
            SweepRun.objects.filter(pk=run.pk).update(
                status=SweepRun.Status.QUEUED, error="", finished_at=None
            )
    except IntegrityError as error:  # a failed run, and another of its scope under way
        scope = {"wing": run.wing, "room": run.room, "entities": run.entities}
        raise under_way(**scope) or error from None
    run.refresh_from_db()


def under_way(**scope: Any) -> Conflict | None:
    """The refusal to start or resume a run of a scope (wing, room, entities) that another
    run, queued or running, sweeps; None if there is none (any more)."""
    twin = SweepRun.objects.filter(status__in=UNFINISHED_RUNS, **scope).order_by("pk").first()
    if twin is None:
        return None
    return Conflict(
        f"This scope is being swept already, by sweep {twin.pk} ({twin.status}): follow it "
        "(or resume it) rather than start another.",
        code="sweep_under_way",
        details={"run": twin.pk},
    )
