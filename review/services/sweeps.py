"""Consolidation sweeps, the writes: record a run, execute it (see `sweep_scan`), apply its
proposals at a chosen threshold, reverse an application in bulk, draw a sample and judge it.
Proposals are written before anything is linked or merged."""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from dedup.errors import Conflict, DomainError, InvalidInput, NotFound
from dedup.policy import NEAR_THRESHOLD_RANGE
from dedup.services import drawer_link
from palace.models import (
    AuditAction,
    AuditEntry,
    AuditTarget,
    DistinctPair,
    Drawer,
    DrawerLink,
    Entity,
    EntityLink,
    Room,
)
from review.gates import DRAWER_TIERS, ENTITY_TIERS, MERGE_TIERS, gates_pass
from review.items import Action, ItemKind, ItemRef
from review.models import Proposal, SweepRun
from review.selectors.stats import similarity_band
from review.services import sweep_parts
from review.services.decisions import decide
from review.services.reverts import revert, reverts_of

logger = logging.getLogger("castellan.sweeps")

Progress = Callable[[int, int], None]  # (rows done, rows in the run)
APPLIED = (Proposal.Status.LINKED, Proposal.Status.MERGED)


def start(
    *,
    wing: str = "",
    room: str = "",
    threshold: float,
    same_kind: bool = True,
    entities: bool = False,
    actor: Any = None,
) -> SweepRun:
    """Record a run (queued). `execute` does the work, in a worker or in the command."""
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
    return SweepRun.objects.create(
        wing=wing,
        room=room,
        threshold=threshold,
        same_kind=same_kind,
        entities=entities,
        created_by=actor if getattr(actor, "is_authenticated", False) else None,
    )


def run_to_resume(pk: int) -> SweepRun:
    run = SweepRun.objects.filter(pk=pk).first()
    if run is None:
        raise NotFound("No such sweep.", code="sweep_not_found")
    if run.status == SweepRun.Status.DONE:
        raise Conflict("The sweep is done already.")
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


# --- apply and reverse -------------------------------------------------------------------------


@dataclass(frozen=True)
class Applied:
    batch: uuid.UUID
    linked: int
    merged: int
    discarded: int


def apply(
    run: SweepRun,
    *,
    threshold: float,
    tiers: Iterable[str] | None = None,
    merge_tiers: Iterable[str] = MERGE_TIERS,
    discard_below: bool = False,
    actor: Any = None,
) -> Applied:
    """Turn the run's proposals at or above `threshold` (in `tiers`) into links, and merge those
    in `merge_tiers` whose gates all pass. One audited batch; `reverse` undoes it."""
    if run.status != SweepRun.Status.DONE:
        raise Conflict("Only a finished run can be applied.", code="run_not_done")
    tiers = set(tiers or (ENTITY_TIERS if run.entities else DRAWER_TIERS))
    merge_tiers = set(merge_tiers)
    batch = uuid.uuid4()
    outcomes = {Proposal.Status.LINKED: 0, Proposal.Status.MERGED: 0, Proposal.Status.DISCARDED: 0}
    discarded: list[int] = []  # kept in the audit row, so `reverse` can propose them again
    with transaction.atomic():
        proposals = run.proposals.select_for_update().filter(status=Proposal.Status.PROPOSED)
        for proposal in proposals.order_by("pk"):
            if proposal.score < threshold or proposal.tier not in tiers:
                if discard_below:
                    proposal.status = Proposal.Status.DISCARDED
                    proposal.save(update_fields=["status"])
                    outcomes[Proposal.Status.DISCARDED] += 1
                    discarded.append(proposal.pk)
                continue
            outcome = _apply_one(run, proposal, merge_tiers, actor, batch)
            if outcome is not None:
                outcomes[outcome] += 1
        applied = Applied(
            batch,
            outcomes[Proposal.Status.LINKED],
            outcomes[Proposal.Status.MERGED],
            outcomes[Proposal.Status.DISCARDED],
        )
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.SWEEP_APPLY,
            target_type=AuditTarget.SWEEP,
            target_id=run.pk,
            after={
                "threshold": threshold,
                "tiers": sorted(tiers),
                "merge_tiers": sorted(merge_tiers),
                "linked": applied.linked,
                "merged": applied.merged,
                "discarded": applied.discarded,
            },
            data={"discarded": discarded},
            batch=batch,
        )
    return applied


def _apply_one(
    run: SweepRun, proposal: Proposal, merge_tiers: set[str], actor: Any, batch: uuid.UUID
) -> Proposal.Status | None:
    """Link one proposal, and merge it through a curator's decision when its tier and gates
    allow. None when it cannot be linked any more."""
    link = _link_for(proposal)
    if link is None:  # a side is gone or superseded since, or a curator said distinct
        return None
    if isinstance(link, DrawerLink):
        proposal.applied_drawer_link = link
    else:
        proposal.applied_entity_link = link
    proposal.status = Proposal.Status.LINKED
    if (
        proposal.kind == Proposal.Kind.DRAWER
        and proposal.tier in merge_tiers
        and gates_pass(proposal.gates)
    ):
        decide(
            item=ItemRef.of(link),
            action=Action.MERGE,
            actor=actor,
            batch=batch,
            note=f"sweep {run.pk}",
            evidence={"sweep": run.pk, "proposal": proposal.pk},
        )
        proposal.status = Proposal.Status.MERGED
    proposal.save(update_fields=["status", "applied_drawer_link", "applied_entity_link"])
    return proposal.status


def _link_for(proposal: Proposal) -> DrawerLink | EntityLink | None:
    if proposal.kind == Proposal.Kind.DRAWER:
        return _drawer_link_for(proposal)
    return _entity_link_for(proposal)


def _drawer_link_for(proposal: Proposal) -> DrawerLink | None:
    newer_id, older_id = proposal.newer_drawer_id, proposal.older_drawer_id
    if newer_id is None or older_id is None:  # a side is deleted since
        return None
    newer = Drawer.objects.current().filter(pk=newer_id).first()
    older = Drawer.objects.current().filter(pk=older_id).first()
    if newer is None or older is None:
        return None
    try:
        link, _ = drawer_link(
            newer=newer,
            older=older,
            verdict=proposal.tier,
            signals=proposal.gates.get("signals", {}),
        )
    except (Conflict, NotFound):  # said distinct, or deleted since the check above
        return None
    return link


def _entity_link_for(proposal: Proposal) -> EntityLink | None:
    newer, older = proposal.newer_entity_id, proposal.older_entity_id
    if newer is None or older is None:  # a side is deleted since
        return None
    if DistinctPair.objects.filter(
        **DistinctPair.of(DistinctPair.Kind.ENTITY, newer, older)
    ).exists():
        return None
    if Entity.objects.filter(pk__in=(newer, older)).count() != 2:
        return None
    link, _ = EntityLink.objects.get_or_create(
        newer_id=newer,
        older_id=older,
        defaults={"similarity": proposal.score, "distance": proposal.gates.get("distance")},
    )
    return link


def reverse(run: SweepRun, *, actor: Any = None) -> int:
    """Undo everything the run's application did, to the exact prior state, in one audited
    batch: merges are reverted, links it made are removed. Later writes are left untouched."""
    batch = uuid.uuid4()
    undone = 0
    with transaction.atomic():
        applied = run.proposals.select_for_update().filter(status__in=APPLIED)
        merge_entries = {
            entry.data.get("evidence", {}).get("proposal"): entry
            for entry in AuditEntry.objects.filter(
                action=AuditAction.decision(Action.MERGE), data__evidence__sweep=run.pk
            )
        }
        for proposal in applied.order_by("-pk"):
            entry = merge_entries.get(proposal.pk)
            merged = proposal.status == Proposal.Status.MERGED
            if merged and entry is not None and reverts_of(entry) is None:
                revert(decision=entry, actor=actor)
            model = DrawerLink if proposal.kind == Proposal.Kind.DRAWER else EntityLink
            if proposal.applied_link_id is not None:
                model.objects.filter(pk=proposal.applied_link_id, status=model.Status.OPEN).delete()
            proposal.status = Proposal.Status.PROPOSED
            proposal.applied_drawer_link = proposal.applied_entity_link = None
            proposal.save(update_fields=["status", "applied_drawer_link", "applied_entity_link"])
            undone += 1
        restored = _propose_discarded_again(run)
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.SWEEP_REVERSE,
            target_type=AuditTarget.SWEEP,
            target_id=run.pk,
            after={"undone": undone, "restored": restored},
            batch=batch,
        )
    return undone


def _propose_discarded_again(run: SweepRun) -> int:
    """The proposals the run's applications discarded since its last reverse are proposed
    again, as they were before; those discarded otherwise stay discarded."""
    rows = AuditEntry.objects.filter(target_type=AuditTarget.SWEEP, target_id=str(run.pk))
    last_reverse = (
        rows.filter(action=AuditAction.SWEEP_REVERSE).order_by("-pk").values_list("pk", flat=True)
    ).first()
    applications = rows.filter(action=AuditAction.SWEEP_APPLY, pk__gt=last_reverse or 0)
    discarded = [
        pk
        for data in applications.values_list("data", flat=True)
        for pk in data.get("discarded", [])
    ]
    return run.proposals.filter(pk__in=discarded, status=Proposal.Status.DISCARDED).update(
        status=Proposal.Status.PROPOSED
    )


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
