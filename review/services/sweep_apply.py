"""Applying a sweep's proposals (reversing an application is `sweep_reverse`; the reads and the
other writes of a sweep are in `sweeps`)."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from dedup.errors import Conflict, InvalidInput, NotFound
from dedup.policy import NEAR_THRESHOLD_RANGE
from dedup.policy.merge_gates import MERGE_TIERS, gates_pass, tiers_chosen, with_symbols_gate
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
    actor_label,
)
from review.items import Action, ItemRef
from review.models import Proposal, SweepRun
from review.services import sweep_locks
from review.services.decisions import decide
from review.services.sweep_outcomes import Applied, Outcome, Tally

APPLIED = (Proposal.Status.LINKED, Proposal.Status.MERGED)


# --- apply -------------------------------------------------------------------------


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
    in `merge_tiers` whose gates all pass. A proposal the curator judged "not the same" is never
    linked: its pair is recorded distinct instead (whatever its score or tier). One audited
    batch; `reverse` undoes it. The outcome of every proposal at or above the threshold is
    counted, explained and stored on the run (`SweepRun.applications`). An application that
    would change nothing is refused (`nothing_to_apply`) and stores nothing, so an apply sent
    twice is recorded once."""
    application = _Application(
        run=run,
        tiers=_options_checked(run, threshold=threshold, tiers=tiers),
        merge_tiers=set(merge_tiers),
        discard_below=discard_below,
        actor=actor,
        tally=Tally(threshold),
    )
    with transaction.atomic():
        # One at a time; NO KEY, so a deletion's foreign-key check of its proposals passes.
        application.run = SweepRun.objects.select_for_update(no_key=True).get(pk=run.pk)
        application.count_settled_before()
        proposed = application.run.proposals.filter(status=Proposal.Status.PROPOSED)
        application.hold_drawers(proposed)  # the drawers, by id, before their proposals
        for proposal in proposed.select_for_update().order_by("pk"):
            application.settle(proposal)
        if not application.changed:  # e.g. the same apply sent twice: nothing is recorded
            raise Conflict(
                f"Nothing to apply: {application.tally.explained()}", code="nothing_to_apply"
            )
        applied = _applied_record(
            application.run,
            application.tally,
            application.batch,
            actor,
            tiers=sorted(application.tiers),
            merge_tiers=sorted(application.merge_tiers),
        )
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.SWEEP_APPLY,
            target_type=AuditTarget.SWEEP,
            target_id=run.pk,
            after={k: v for k, v in applied.outcome.items() if k not in ("batch", "by", "at")},
            data={"discarded": application.discarded, "recorded_distinct": application.recorded},
            batch=application.batch,
        )
    run.applications = application.run.applications
    return applied


def _options_checked(run: SweepRun, *, threshold: float, tiers: Iterable[str] | None) -> set[str]:
    """The tiers chosen, once the run and the options are found fit to apply."""
    if run.status != SweepRun.Status.DONE:
        raise Conflict("Only a finished run can be applied.", code="run_not_done")
    low, high = NEAR_THRESHOLD_RANGE
    if not (math.isfinite(threshold) and low <= threshold <= high):  # NaN compares false
        raise InvalidInput(f"threshold must be a number from {low} to {high}.")
    return tiers_chosen(tiers, entities=run.entities)


def apply_check(
    run: SweepRun,
    *,
    threshold: float,
    tiers: Iterable[str] | None = None,
    discard_below: bool = False,
) -> None:
    """What `apply` would refuse, found without writing (for a request that queues the apply):
    a run not done, a bad threshold or tier, and nothing to apply where no proposal still
    proposed could be linked, merged, recorded distinct or discarded (one with a side deleted or
    merged away since cannot), with the explanation `apply` gives. Where one could, only `apply`
    can tell (a pair linked since, a curator's distinct pair), and refuses then."""
    chosen = _options_checked(run, threshold=threshold, tiers=tiers)
    side = "entity" if run.entities else "drawer"
    sides = Q(**{f"newer_{side}__isnull": False, f"older_{side}__isnull": False})
    live = (
        sides
        if run.entities
        else sides & Q(newer_drawer__valid_to__isnull=True) & Q(older_drawer__valid_to__isnull=True)
    )
    judged, at = Q(verdict=Action.WRONG), Q(score__gte=threshold)
    # In `_Application.settle`'s order: a "not the same" verdict, then below, then the tiers.
    changes = judged & sides | ~judged & at & Q(tier__in=chosen) & live
    if discard_below:
        changes |= ~judged & ~at
    proposed = run.proposals.filter(status=Proposal.Status.PROPOSED)
    if proposed.filter(changes).exists():
        return
    counts = proposed.aggregate(
        other_tier=Count("pk", filter=~judged & at & ~Q(tier__in=chosen)),
        gone=Count("pk", filter=at & (judged | Q(tier__in=chosen))),
        gone_below=Count("pk", filter=~at & judged),
    )
    application = _Application(
        run=run,
        tiers=chosen,
        merge_tiers=set(),
        discard_below=discard_below,
        actor=None,
        tally=Tally(threshold),
    )
    application.count_settled_before()
    for outcome, count, below in (
        (Outcome.OTHER_TIER, counts["other_tier"], False),
        (Outcome.GONE, counts["gone"], False),
        (Outcome.GONE, counts["gone_below"], True),
    ):
        if count:  # a Counter's zero still counts as an entry when explained
            (application.tally.below if below else application.tally.reached)[outcome] += count
    raise Conflict(f"Nothing to apply: {application.tally.explained()}", code="nothing_to_apply")


@dataclass
class _Application:
    """One `apply` under way: its settings, and what it did so far."""

    run: SweepRun
    tiers: set[str]
    merge_tiers: set[str]
    discard_below: bool
    actor: Any
    tally: Tally
    batch: uuid.UUID = field(default_factory=uuid.uuid4)
    discarded: list[int] = field(default_factory=list)  # for `reverse` to propose again
    recorded: list[list] = field(default_factory=list)  # distinct pairs made, for `reverse`

    @property
    def changed(self) -> bool:
        """Whether any proposal was linked, merged, recorded distinct or discarded."""
        made = (Outcome.LINKED, Outcome.MERGED, Outcome.DISTINCT, Outcome.DISCARDED)
        return any(self.tally.count(outcome) for outcome in made)

    def count_settled_before(self) -> None:
        """An application accounts for every proposal at or above the threshold: those an
        earlier application linked, merged, recorded distinct or discarded (which the what-if
        table no longer counts) are counted "before" (one query), not walked."""
        settled = (
            self.run.proposals.filter(score__gte=self.tally.threshold)
            .exclude(status=Proposal.Status.PROPOSED)
            .values_list("status")
            .annotate(count=Count("pk"))
        )
        for status, count in settled:
            before = status == Proposal.Status.DISCARDED
            outcome = Outcome.DISCARDED_BEFORE if before else Outcome.APPLIED_BEFORE
            self.tally.reached[outcome] += count

    def hold_drawers(self, proposed: QuerySet[Proposal]) -> None:
        """Hold, before any proposal is locked, every drawer this application may link, merge or
        record distinct: a deletion locks its drawer and then sets its proposals' sides to null,
        so locking the proposals first and each pair's drawers on the way (in `drawer_link`
        and `decide`) deadlocked with it. FOR NO KEY UPDATE when a merge may supersede one of them
        (see `sweep_locks.drawers_hold`)."""
        if self.run.entities:
            return
        applied = Q(score__gte=self.tally.threshold, tier__in=self.tiers)
        linked: set[int] = set()
        judged: set[int] = set()
        for newer, older, verdict in proposed.filter(applied | Q(verdict=Action.WRONG)).values_list(
            "newer_drawer_id", "older_drawer_id", "verdict"
        ):
            (judged if verdict == Action.WRONG else linked).update(
                pk for pk in (newer, older) if pk is not None
            )
        merges = bool(self.merge_tiers & self.tiers)
        sweep_locks.drawers_hold(linked, any_state=judged, update=merges)

    def settle(self, proposal: Proposal) -> None:
        """Apply one proposal still proposed, and count what became of it."""
        below = proposal.score < self.tally.threshold
        if proposal.verdict == Action.WRONG:
            self.tally.add(self._record_distinct(proposal), below=below)
        elif below:
            if self.discard_below:
                proposal.status = Proposal.Status.DISCARDED
                proposal.save(update_fields=["status"])
                self.discarded.append(proposal.pk)
                self.tally.add(Outcome.DISCARDED, below=True)
        elif proposal.tier not in self.tiers:
            self.tally.add(Outcome.OTHER_TIER, below=False)
        else:
            outcome = _apply_one(self.run, proposal, self.merge_tiers, self.actor, self.batch)
            self.tally.add(outcome, below=False)

    def _record_distinct(self, proposal: Proposal) -> Outcome:
        """A proposal judged "not the same": its pair is remembered as distinct (never linked or
        proposed again) and the proposal marked so. `reverse` forgets a pair this made."""
        kind = DistinctPair.Kind(proposal.kind)
        newer, older = proposal.newer_pk, proposal.older_pk
        if newer is None or older is None:  # a side deleted since: nothing left to keep apart
            return Outcome.GONE
        _, created = DistinctPair.objects.get_or_create(**DistinctPair.of(kind, newer, older))
        if created:
            self.recorded.append([kind.value, *DistinctPair.ordered(newer, older)])
        proposal.status = Proposal.Status.DISTINCT
        proposal.save(update_fields=["status"])
        return Outcome.DISTINCT


def _applied_record(
    run: SweepRun, tally: Tally, batch: uuid.UUID, actor: Any, **settings: Any
) -> Applied:
    outcome = tally.record(
        batch=batch, actor_label=actor_label(actor), at=timezone.now().isoformat(), **settings
    )
    run.applications = [*run.applications, outcome]
    run.save(update_fields=["applications"])
    return Applied(
        batch,
        tally.count(Outcome.LINKED),
        tally.count(Outcome.MERGED),
        tally.count(Outcome.DISCARDED),
        tally.count(Outcome.DISTINCT),
        outcome,
    )


def _apply_one(
    run: SweepRun, proposal: Proposal, merge_tiers: set[str], actor: Any, batch: uuid.UUID
) -> Outcome:
    """Link one proposal, and merge it through a curator's decision when its tier and gates
    allow; or say why it was not linked."""
    link, outcome = _link_for(proposal)
    if link is None:
        return outcome
    if isinstance(link, DrawerLink):
        proposal.applied_drawer_link = link
    else:
        proposal.applied_entity_link = link
    proposal.status = Proposal.Status.LINKED
    if (
        proposal.kind == Proposal.Kind.DRAWER
        and proposal.tier in merge_tiers
        and gates_pass(with_symbols_gate(proposal.gates, proposal.texts))
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
    return Outcome(proposal.status)


LinkFound = tuple[DrawerLink | EntityLink | None, Outcome]


def _link_for(proposal: Proposal) -> LinkFound:
    """The link this apply makes, or None and why there is none. A link that already existed
    is not taken over: `reverse` removes only links the run made."""
    if proposal.newer_pk is None or proposal.older_pk is None:  # a side is deleted since
        return None, Outcome.GONE
    if proposal.kind == Proposal.Kind.DRAWER:
        return _drawer_link_for(proposal.newer_pk, proposal.older_pk, proposal)
    return _entity_link_for(proposal.newer_pk, proposal.older_pk, proposal)


def _drawer_link_for(newer_id: int, older_id: int, proposal: Proposal) -> LinkFound:
    newer = Drawer.objects.current().filter(pk=newer_id).first()
    older = Drawer.objects.current().filter(pk=older_id).first()
    if newer is None or older is None:
        return None, Outcome.GONE
    try:
        link, created = drawer_link(
            newer=newer,
            older=older,
            verdict=proposal.tier,
            signals=proposal.gates.get("signals", {}),
        )
    except Conflict:  # a curator said distinct
        return None, Outcome.ALREADY_DISTINCT
    except NotFound:  # deleted since the check above
        return None, Outcome.GONE
    return (link, Outcome.LINKED) if created else (None, Outcome.ALREADY_LINKED)


def _entity_link_for(newer: int, older: int, proposal: Proposal) -> LinkFound:
    if DistinctPair.objects.filter(
        **DistinctPair.of(DistinctPair.Kind.ENTITY, newer, older)
    ).exists():
        return None, Outcome.ALREADY_DISTINCT
    if Entity.objects.filter(pk__in=(newer, older)).count() != 2:
        return None, Outcome.GONE
    link, created = EntityLink.objects.get_or_create(
        newer_id=newer,
        older_id=older,
        defaults={"similarity": proposal.score, "distance": proposal.gates.get("distance")},
    )
    return (link, Outcome.LINKED) if created else (None, Outcome.ALREADY_LINKED)
