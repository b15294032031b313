"""Reversing a sweep's application: its merges reverted together, the links it made removed,
the proposals it settled proposed again (the application itself is in `sweep_apply`)."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction

from dedup.errors import Conflict, DomainError
from palace.models import AuditAction, AuditEntry, AuditTarget, DistinctPair, DrawerLink, EntityLink
from review.items import Action
from review.models import Proposal, SweepRun
from review.selectors.sweeps import applied_since_last_reverse
from review.services import sweep_locks
from review.services.reverts import hold_decisions, revert_held
from review.services.sweep_apply import APPLIED
from review.services.sweep_outcomes import Reversed

NOT_APPLIED = "Nothing of this sweep is applied (it was reversed already, or never applied)."


def reverse(run: SweepRun, *, actor: Any = None) -> Reversed:
    """Undo everything the run's application did, to the exact prior state, in one audited
    batch: merges are reverted, links it made are removed. Later writes are left untouched: a
    merge whose merged-away drawer was deleted since is reverted as far as it can be (the kept
    drawer's consolidation; the drawer stays deleted) rather than block the whole reverse for
    good, and the audit row names it (`data.not_restored`: proposal, decision, its revert, what
    was not restored). Any other refusal names the proposal and its decision. With nothing
    applied, 409 run_not_applied and no audit row."""
    batch = uuid.uuid4()
    with transaction.atomic():
        # One apply or reverse at a time (NO KEY: as in `apply`).
        SweepRun.objects.select_for_update(no_key=True).get(pk=run.pk)
        merge_entries = _merge_entries(run)
        # The canonical order of a revert: its audit rows (and its dependents'), then the rooms,
        # the drawers; a curator's revert of one of these merges would otherwise deadlock.
        guessed = hold_decisions(list(merge_entries.values()))
        # Their rooms, then the drawers (or the entities) by id, before the proposals.
        sweep_locks.applied_sides_held(run, run.proposals.filter(status__in=APPLIED))
        applied = list(run.proposals.select_for_update().filter(status__in=APPLIED).order_by("-pk"))
        merged = [p.pk for p in applied if p.status == Proposal.Status.MERGED]
        merges = [merge_entries[pk] for pk in merged if pk in merge_entries]
        not_restored, reverted_before = _merges_reverted(merges, guessed, actor)
        removed_links = _links_removed(applied)
        undone = len(applied) - reverted_before  # a merge a curator reverted is not undone here
        restored, distinct = _undo_discards_and_distinct(run)
        # A second reverse (a double click) finds nothing applied: no row. A run whose merges a
        # curator all reverted one by one still has its proposals to propose again.
        if not (applied or restored or distinct):
            raise Conflict(NOT_APPLIED, code="run_not_applied")
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.SWEEP_REVERSE,
            target_type=AuditTarget.SWEEP,
            target_id=run.pk,
            after={"undone": undone, "restored": restored, "distinct_undone": distinct},
            data={**removed_links, **({"not_restored": not_restored} if not_restored else {})},
            batch=batch,
        )
    return Reversed(undone, not_restored)


def _merge_entries(run: SweepRun) -> dict[int, AuditEntry]:
    """Each proposal's latest merge row: a run applied, reversed and applied again holds two,
    and the first is reverted already (oldest first, so the latest is the one kept)."""
    return {
        entry.data.get("evidence", {}).get("proposal"): entry
        for entry in AuditEntry.objects.filter(
            action=AuditAction.decision(Action.MERGE), data__evidence__sweep=run.pk
        ).order_by("pk")
    }


def _links_removed(applied: list[Proposal]) -> dict[str, list[str]]:
    """Proposed again, each applied proposal's link removed if still open; the links removed,
    named in the audit row, so the console can say what became of them."""
    removed_links: dict[str, list[str]] = {"drawer_links": [], "entity_links": []}
    for proposal in applied:
        model = DrawerLink if proposal.kind == Proposal.Kind.DRAWER else EntityLink
        link_id = proposal.applied_link_id
        if link_id is not None:
            removed, _ = model.objects.filter(pk=link_id, status=model.Status.OPEN).delete()
            if removed:
                removed_links[f"{proposal.kind}_links"].append(str(link_id))
        proposal.status = Proposal.Status.PROPOSED
        proposal.applied_drawer_link = proposal.applied_entity_link = None
        proposal.save(update_fields=["status", "applied_drawer_link", "applied_entity_link"])
    return removed_links


def _merges_reverted(
    entries: list[AuditEntry], guessed: list[AuditEntry], actor: Any
) -> tuple[list[dict], int]:
    """Revert the run's merges, as far as each can be (`revert_held`); what could not be
    restored, for the reverse's audit row, and how many were reverted before (a curator's revert,
    left out): together, newest decision first (two applications may have merged into one
    drawer, the later on a proposal of a lower id). A refusal (a later decision on their drawers, a
    copy written since) names the proposal and the decision, so the curator knows which."""
    done = set(AuditEntry.objects.filter(reverts__in=entries).values_list("reverts_id", flat=True))
    entries = [entry for entry in entries if entry.pk not in done]
    proposal_of = {entry.pk: entry.data["evidence"]["proposal"] for entry in entries}
    try:
        reverted = revert_held(entries, guessed, actor=actor)
    except DomainError as error:
        decision = error.details.get("decision")
        if decision is None:  # decisions that landed while it was held: said as they are
            raise
        raise type(error)(
            f"Proposal {proposal_of[decision]} of this sweep (its merge, decision {decision}): "
            f"{error.message}",
            code=error.code,
            details={**error.details, "proposal": proposal_of[decision]},
        ) from error
    not_restored = [
        {
            "proposal": proposal_of[row.data["reverts"]],
            "decision": row.data["reverts"],
            "revert": row.pk,
            "not_restored": row.data["not_restored"],
        }
        for row in reverted
        if row.data.get("not_restored")
    ]
    return not_restored, len(done)


def _undo_discards_and_distinct(run: SweepRun) -> tuple[int, int]:
    """The proposals the run's applications since its last reverse discarded, or recorded as
    distinct, are proposed again, as they were before; the distinct pairs those applications
    made are forgotten (a pair a curator had recorded before stays). Those discarded otherwise
    stay discarded."""
    applications = list(applied_since_last_reverse(run).values_list("data", flat=True))
    discarded = [pk for data in applications for pk in data.get("discarded", [])]
    for kind, low, high in (p for data in applications for p in data.get("recorded_distinct", [])):
        DistinctPair.objects.filter(**DistinctPair.of(kind, low, high)).delete()
    restored = run.proposals.filter(pk__in=discarded, status=Proposal.Status.DISCARDED).update(
        status=Proposal.Status.PROPOSED
    )
    distinct = run.proposals.filter(status=Proposal.Status.DISTINCT).update(
        status=Proposal.Status.PROPOSED
    )
    return restored, distinct
