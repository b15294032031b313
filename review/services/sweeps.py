"""Consolidation sweeps, the writes: record a run, execute it (see `sweep_scan`), apply its
proposals at a chosen threshold, reverse an application in bulk, draw a sample and judge it.
Proposals are written before anything is linked or merged."""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction

from dedup.errors import Conflict, DomainError, InvalidInput, NotFound
from dedup.policy import NEAR_THRESHOLD_RANGE
from dedup.validation import optional_place_name
from palace.models import (
    AuditAction,
    AuditEntry,
    AuditTarget,
    Room,
)
from review.items import Action, ItemKind, ItemRef
from review.models import Proposal, SweepRun
from review.selectors.stats import similarity_band
from review.selectors.sweeps import STUCK_AFTER, worked_on
from review.services import sweep_parts
from review.services.decisions import decide
from review.services.sweep_apply import APPLIED, Applied, apply
from review.services.sweep_jobs import apply_queue, job_cancel, reverse_queue
from review.services.sweep_outcomes import Reversed
from review.services.sweep_reverse import reverse

logger = logging.getLogger("castellan.sweeps")

Progress = Callable[[int, int], None]  # (rows done, rows in the run)


def start(
    *,
    wing: str = "",
    room: str = "",
    threshold: float,
    same_kind: bool = True,
    entities: bool = False,
    actor: Any = None,
) -> SweepRun:
    """Record a run (queued). `execute` does the work, in a worker or in the command. Refused
    (`sweep_under_way`, naming the run) while a run of the same scope is queued or running.
    An entity sweep covers every entity (entities belong to no wing): a wing or room with it is
    refused, not dropped, so no one takes its run for a sweep of that wing."""
    # Found as every read finds a wing or room: composed ("cafe\u0301" is café).
    wing = optional_place_name(wing, "wing")
    room = optional_place_name(room, "room")
    if entities and (wing or room):
        raise InvalidInput(
            "An entity sweep covers every entity (entities belong to no wing): leave out the "
            "wing and room."
        )
    low, high = NEAR_THRESHOLD_RANGE
    if not low <= threshold <= high:
        raise InvalidInput(f"threshold must be a number from {low:g} to {high:g}.")
    if room and not wing:
        raise InvalidInput("room needs its wing.")
    if (
        wing
        and not Room.objects.filter(wing__name=wing, **({"name": room} if room else {})).exists()
    ):
        raise DomainError("No such wing or room.", code="room_not_found")
    for _ in range(2):  # a run under way that ends before it is named: try once more
        try:
            with transaction.atomic():
                return SweepRun.objects.create(
                    wing=wing,
                    room=room,
                    threshold=threshold,
                    same_kind=same_kind,
                    entities=entities,
                    created_by=actor if getattr(actor, "is_authenticated", False) else None,
                )
        except IntegrityError as error:  # `one_unfinished_sweep_per_scope`, or another
            refusal = sweep_parts.under_way(wing=wing, room=room, entities=entities)
            if refusal is not None:
                raise refusal from None
            failure = error
    raise failure


def run_to_resume(pk: int) -> SweepRun:
    """The run, if it can be resumed: not done, and (failed) not while another run of its scope
    is under way. The worker's `sweep_parts.resume` refuses that too, should one start between."""
    run = SweepRun.objects.filter(pk=pk).first()
    if run is None:
        raise NotFound("No such sweep.", code="sweep_not_found")
    if run.status == SweepRun.Status.DONE:
        raise Conflict("The sweep is done already: nothing to resume.", code="run_done")
    if run.status == SweepRun.Status.FAILED:
        refusal = sweep_parts.under_way(wing=run.wing, room=run.room, entities=run.entities)
        if refusal is not None:
            raise refusal
    return run


def queue_resumed(pk: int, queue: Callable[[int], object]) -> SweepRun:
    """Queue a run to resume for the workers (`run_to_resume`'s checks too): refused while a task
    of it is in flight (`worked_on`), where resuming would only queue its work twice (eight
    resumes at once had queued 34 tasks for a run of four parts: the concurrency trial). Checked
    and queued under the run's row lock, in one transaction, so of resumes at once one queues
    it and the others see its task. `queue` queues the run's task (`review.tasks.run_sweep`'s
    enqueue, given by the caller: the tasks import these services)."""
    with transaction.atomic():
        SweepRun.objects.select_for_update(no_key=True).filter(pk=pk).exists()
        run = run_to_resume(pk)
        if run.status == SweepRun.Status.FAILED:  # queued again now: the next resume sees it
            sweep_parts.requeue(run)
        elif worked_on(run):
            minutes = int(STUCK_AFTER.total_seconds() // 60)
            raise Conflict(
                f"Sweep {run.pk} is {run.status} and a worker has it, or it waits for one: "
                "nothing to resume. A run whose task a worker took over "
                f"{minutes} minutes ago without finishing it can be resumed (the worker died).",
                code="sweep_under_way",
                details={"run": run.pk},
            )
        queue(run.pk)
    run.refresh_from_db()
    return run


def execute(run: SweepRun, *, progress: Progress = lambda done, total: None) -> SweepRun:
    """Sweep and write the proposals here, part after part (`review.tasks.run_sweep` runs the
    parts in workers instead). Proposals are committed batch by batch with the part's progress,
    so a crashed run keeps what it found, and executing it again resumes where it stopped."""
    parts = sweep_parts.resume(run)
    done = sum(part.done for part in run.parts.all())

    def batch_done(rows: int) -> None:
        nonlocal done
        done += rows
        progress(done, run.total)

    for part in parts:
        sweep_parts.run_part(part.pk, batch_done=batch_done)
    run.refresh_from_db()
    if run.status != SweepRun.Status.DONE:  # no parts at all
        sweep_parts.finish(run.pk)
        run.refresh_from_db()
    return run


# --- apply and reverse: `sweep_apply`, `sweep_reverse`; in the background: `sweep_jobs` --------

# Re-exported: callers reach every write of a sweep as `sweeps.<name>`.
__all__ = [
    "APPLIED",
    "Applied",
    "Reversed",
    "apply",
    "apply_queue",
    "draw_sample",
    "execute",
    "job_cancel",
    "judge",
    "reverse",
    "reverse_queue",
    "start",
]


# --- the sample that measures precision --------------------------------------------------------


def draw_sample(run: SweepRun, *, per_stratum: int = 5, actor: Any = None) -> int:
    """Mark a random sample for review, stratified by tier and similarity band: up to
    `per_stratum` of each, drawn with the run's id as seed (the same sample every time)."""
    strata: dict[tuple[str, str], list[int]] = {}
    for pk, tier, score in run.proposals.values_list("pk", "tier", "score").order_by("pk"):
        strata.setdefault((tier, similarity_band(score)), []).append(pk)
    rng = random.Random(run.pk)
    chosen = [pk for ids in strata.values() for pk in rng.sample(ids, min(per_stratum, len(ids)))]
    with transaction.atomic():
        marked = run.proposals.filter(pk__in=chosen, sampled=False).update(sampled=True)
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.SWEEP_SAMPLE,
            target_type=AuditTarget.SWEEP,
            target_id=run.pk,
            after={"per_stratum": per_stratum, "sampled": marked},
        )
    return marked


VERDICTS = (Action.SAME, Action.WRONG)


def judge(
    proposal: Proposal,
    *,
    verdict: str,
    actor: Any = None,
    note: str = "",
    batch: uuid.UUID | None = None,
) -> AuditEntry:
    """A curator's verdict on a proposal: the same thing, or not. Nothing is applied; the
    verdicts measure the run's precision. A review decision on item p<id> (see
    `actions.JudgeProposal`), so it is refused when already given and can be reverted like any
    decision."""
    if verdict not in VERDICTS:
        raise InvalidInput("verdict must be 'same' or 'wrong'.", code="invalid_action")
    return decide(
        item=ItemRef(ItemKind.PROPOSAL, proposal.pk),
        action=verdict,
        actor=actor,
        note=note,
        batch=batch,
    )
