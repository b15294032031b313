"""Reads of a sweep: its proposals, what applying it would do, and its measured precision."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Count, Prefetch, Q, QuerySet
from django.db.models.fields.json import KT
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from dedup.policy.merge_gates import (
    DRAWER_TIERS,
    ENTITY_TIERS,
    GATES,
    MERGE_TIERS,
    gates_pass,
    text_differences,
)
from dedup.policy.word_flags import WordFlag
from palace.models import AuditAction, AuditEntry, AuditTarget
from review.diff import Segment, side_by_side
from review.items import Action
from review.models import Proposal, SweepJob, SweepRun
from review.selectors.stats import similarity_band

WHAT_IF_THRESHOLDS = (0.9, 0.95, 0.98, 1.0)
WHAT_IF_STEPS = 4
SAMPLE_CARDS = 20


# A part is at most 50,000 drawers, a few seconds to a minute of a worker's time (docs/scaling.md):
# a task still "running" after this long had its worker killed under it (django-tasks' database
# backend has no heartbeat, so a dead worker's task stays RUNNING forever).
STUCK_AFTER = timedelta(minutes=10)
# The sweep's tasks (`review.tasks`: their `module_path`s, which a test holds to these); named,
# not imported, since the tasks import the services that ask this.
SWEEP_TASKS = ("review.tasks.run_sweep", "review.tasks.run_sweep_part")


def worked_on(run: SweepRun) -> bool:
    """Whether a task of the run is in flight: waiting in the queue for a worker (a fresh run,
    or no worker started yet), or taken by one less than STUCK_AFTER ago. Resuming it then would
    only queue its work twice (README, "A worker that stops mid-run")."""
    # One query, in the database: the tasks' first argument is the run's id or a part's.
    ours = Q(task_path=SWEEP_TASKS[0], args_kwargs__args__0=run.pk) | Q(
        task_path=SWEEP_TASKS[1],
        args_kwargs__args__0__in=list(run.parts.values_list("pk", flat=True)),
    )
    waiting = Q(status=TaskResultStatus.READY)
    lately = Q(status=TaskResultStatus.RUNNING) & (
        Q(started_at__isnull=True) | Q(started_at__gt=timezone.now() - STUCK_AFTER)
    )
    return DBTaskResult.objects.filter(ours & (waiting | lately)).exists()


def runs_listed() -> QuerySet[SweepRun]:
    """Every run, each with its jobs (latest first) read in one query for the page."""
    jobs = SweepJob.objects.select_related("requested_by").order_by("-pk")
    return SweepRun.objects.prefetch_related(
        Prefetch("jobs", queryset=jobs, to_attr="jobs_latest_first")
    )


def latest_job(run: SweepRun) -> SweepJob | None:
    """The run's latest Apply or Reverse asked for (`SweepJob`), or None; from `runs_listed`'s
    prefetch when the run was read by it."""
    listed = getattr(run, "jobs_latest_first", None)
    if listed is not None:
        return listed[0] if listed else None
    return run.jobs.select_related("requested_by").order_by("-pk").first()


@dataclass
class SampleCard:
    """A sampled proposal to judge, with the diff of its two texts and their warnings (named
    like an item's, for the shared warning template)."""

    proposal: Proposal
    left: list[Segment]
    right: list[Segment]
    numbers_left: list[str]
    numbers_right: list[str]
    word_flags: list[WordFlag]


def sample_to_judge(run: SweepRun) -> list[SampleCard]:
    """The run's sampled proposals not judged yet (one query), each with its diff."""
    cards = []
    sample = run.proposals.filter(sampled=True, verdict="").order_by("tier", "score")
    for proposal in sample[:SAMPLE_CARDS]:
        older, newer = proposal.texts.get("older", ""), proposal.texts.get("newer", "")
        differences = text_differences(older, newer, other_words=not run.entities)
        cards.append(
            SampleCard(
                proposal,
                *side_by_side(older, newer),
                list(differences.numbers_left),
                list(differences.numbers_right),
                list(differences.words),
            )
        )
    return cards


def precision(run: SweepRun) -> list[dict]:
    """From the judged sample: per tier and band, how many were drawn, how many of those were
    judged the same or not, and the share the same. A proposal judged in the queue without
    being drawn is counted apart (`elsewhere`): the curator chose it, so it would bias a
    measure that holds only for a random sample (it had been counted judged but not sampled)."""
    rows: dict[tuple[str, str], dict] = {}
    for tier, score, verdict, sampled in run.proposals.values_list(
        "tier", "score", "verdict", "sampled"
    ):
        row = rows.setdefault(
            (tier, similarity_band(score)),
            {"proposals": 0, "sampled": 0, "same": 0, "wrong": 0, "elsewhere": 0},
        )
        row["proposals"] += 1
        row["sampled"] += sampled
        if verdict and sampled:
            row[verdict] += 1
        elif verdict:
            row["elsewhere"] += 1
    return [
        {
            "tier": tier,
            "band": band_,
            **row,
            "precision": round(row["same"] / (row["same"] + row["wrong"]), 3)
            if row["same"] + row["wrong"]
            else None,
        }
        for (tier, band_), row in sorted(rows.items())
    ]


def proposals_for(run: SweepRun, *, tier: str = "", status: str = "") -> QuerySet[Proposal]:
    queryset = run.proposals.all()
    if tier:
        queryset = queryset.filter(tier=tier)
    if status:
        queryset = queryset.filter(status=status)
    return queryset


def what_if_thresholds(run: SweepRun) -> list[float]:
    """The run's own threshold, WHAT_IF_STEPS even steps from it to 1.0, and the usual ones above
    it: a run at 0.8 whose proposals are all below 0.9 shows them, not a table of zeros."""
    low = run.threshold
    steps = {round(low + (1.0 - low) * k / WHAT_IF_STEPS, 2) for k in range(1, WHAT_IF_STEPS + 1)}
    return sorted({low, *steps, *(t for t in WHAT_IF_THRESHOLDS if t > low)})


def summary(run: SweepRun, *, thresholds: Iterable[float] = WHAT_IF_THRESHOLDS) -> dict:
    """Per tier: proposals, and what applying at each threshold would do (the API's fixed ones
    unless told; the console's page asks `what_if_thresholds`). A proposal judged "not the same"
    in the sample is never linked: applying records it distinct (`distinct`). Counted over the
    proposals an apply would still reach, as `services.sweep_apply.apply_check` judges them: one
    applied, discarded or recorded distinct already is left out (an apply counts it "applied
    before"; a reverse proposes it again), and so is one whose drawer or entity was deleted,
    superseded or merged away since; these are counted among the tiers only. At most: a pair
    linked or said distinct since, or a merge of one group's copies, is known to the apply only.

    Counted by the database, one row per tier, verdict and gates' verdicts (a few dozen; an
    entity sweep merges nothing, so its gates are not asked), each threshold's count a filtered
    COUNT: the run's page and `GET /api/sweeps/{id}`, which clients poll, had read every
    proposal (39,000: 0.6 s)."""
    thresholds = list(thresholds)
    # The gates' three verdicts, not the gates whole (which hold each pair's signals, so a
    # group a proposal).
    gates = {f"gate_{name}": KT(f"gates__{name}") for name in GATES} if not run.entities else {}
    keys = ("tier", "verdict", *gates)
    kept = Q(status=Proposal.Status.PROPOSED) & _reachable(run)
    at = {f"at_{i}": Count("pk", filter=kept & Q(score__gte=t)) for i, t in enumerate(thresholds)}
    groups = (
        run.proposals.order_by()
        .annotate(**gates)
        .values(*keys)
        .annotate(proposals=Count("pk"), kept=Count("pk", filter=kept), **at)
    )
    labels = [f"{t:.2f}" if round(t, 2) == t else f"{t:.3f}" for t in thresholds]
    what_if = {label: {"links": 0, "merges": 0, "distinct": 0} for label in labels}
    tiers: dict[str, int] = {}
    order = ENTITY_TIERS if run.entities else DRAWER_TIERS  # the tiers in the kind's order
    for group in sorted(groups, key=lambda g: order.index(g["tier"])):
        tier = group["tier"]
        tiers[tier] = tiers.get(tier, 0) + group["proposals"]
        if group["verdict"] == "wrong":
            outcome = "distinct"
        elif tier in MERGE_TIERS and not run.entities and gates_pass(_gates(group)):
            outcome = "merges"
        else:
            outcome = "links"
        for index, label in enumerate(labels):
            # A judgement is recorded whatever the threshold (`apply_reach`, the confirm page):
            # counted at the threshold alone, the table said 0 where Apply then recorded some.
            counted = group["kept"] if outcome == "distinct" else group[f"at_{index}"]
            what_if[label][outcome] += counted
    return {"tiers": tiers, "if_applied_at": what_if}


def _reachable(run: SweepRun) -> Q:
    """The proposals an apply would link, merge or record distinct, as `_Application.settle`
    passes the others over ("gone"): a pair judged "not the same" while both its sides exist
    (superseded or not), any other while both are current."""
    side = "entity" if run.entities else "drawer"
    sides = Q(**{f"newer_{side}__isnull": False, f"older_{side}__isnull": False})
    if run.entities:
        return sides
    current = Q(newer_drawer__valid_to__isnull=True, older_drawer__valid_to__isnull=True)
    judged = Q(verdict=Action.WRONG)
    return sides & (judged | current)


def _gates(group: dict) -> dict[str, bool | None]:
    """A group's gates as `gates_pass` reads them, from their values as text ('true', 'false',
    and for a JSON null None or, on SQLite, 'null')."""
    values = {name: group[f"gate_{name}"] for name in GATES}
    return {
        name: None if v in (None, "null") else v in (True, 1, "true") for name, v in values.items()
    }


def applied_since_last_reverse(run: SweepRun) -> QuerySet[AuditEntry]:
    """The run's applications (`sweep.apply` rows) since its last reverse: what a Reverse undoes."""
    rows = AuditEntry.objects.filter(target_type=AuditTarget.SWEEP, target_id=str(run.pk))
    last_reverse = (
        rows.filter(action=AuditAction.SWEEP_REVERSE).order_by("-pk").values_list("pk", flat=True)
    ).first()
    return rows.filter(action=AuditAction.SWEEP_APPLY, pk__gt=last_reverse or 0)


# --- the reach of Apply and Reverse, shown before they run (issue 13, defect 4) ---------------


def apply_reach(
    run: SweepRun,
    *,
    threshold: float,
    tiers: Iterable[str],
    merge_tiers: Iterable[str],
    discard_below: bool,
) -> dict[str, int]:
    """What `services.sweeps.apply` would do with these options, by action, counted over the
    proposals it would read (those still proposed). Merges are counted by group: n copies of
    one memory take n - 1 merges, the group's other pairs skipped (`grouped`) as merged away by
    then. At most: a proposal whose side was deleted or superseded since is skipped, and so is
    a link whose side a merge of the same apply takes away."""
    tiers, merge_tiers = set(tiers), set(merge_tiers)
    reach = {"link": 0, "merge": 0, "grouped": 0, "distinct": 0, "discard": 0, "keep": 0}
    rows = run.proposals.filter(status=Proposal.Status.PROPOSED).values_list(
        "kind", "tier", "score", "gates", "verdict", "newer_drawer_id", "older_drawer_id"
    )
    groups = _Groups()
    # In `services.sweep_apply`'s order (`_Apply.settle`): a "not the same" verdict first, at any
    # score or tier; then below the threshold; then outside the chosen tiers (left proposed).
    for kind, tier, score, gates, verdict, newer, older in rows:
        if verdict == "wrong":  # judged "not the same": never linked, recorded distinct
            reach["distinct"] += 1
        elif score < threshold:
            reach["discard" if discard_below else "keep"] += 1
        elif tier not in tiers:
            reach["keep"] += 1
        else:
            merges = kind == Proposal.Kind.DRAWER and tier in merge_tiers and gates_pass(gates)
            if not merges:
                reach["link"] += 1
            else:
                reach["merge" if groups.joined(newer, older) else "grouped"] += 1
    return reach


class _Groups:
    """Drawers merged together, as one apply's merges join them (union-find)."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def _root(self, drawer: int) -> int:
        root = self.parent.setdefault(drawer, drawer)
        while root != self.parent[root]:
            root = self.parent[root]
        self.parent[drawer] = root
        return root

    def joined(self, one: int, other: int) -> bool:
        """Join the two drawers' groups: False when they were one group already (a merge of
        the group left this pair nothing to do)."""
        a, b = self._root(one), self._root(other)
        if a == b:
            return False
        self.parent[a] = b
        return True


def _merges_reverted_since(run: SweepRun, last_reverse: int | None) -> int:
    """The run's merges since its last reverse that a curator has reverted one by one."""
    merges = AuditEntry.objects.filter(
        action=AuditAction.decision(Action.MERGE),
        data__evidence__sweep=run.pk,
        pk__gt=last_reverse or 0,
    )
    return merges.filter(reverted_by__isnull=False).count()


def reverse_reach(run: SweepRun) -> dict[str, int]:
    """What `services.sweeps.reverse` would undo: the links and merges the run's applications
    made, the proposals they discarded (proposed again), and those they recorded distinct
    (proposed again, the distinct pairs the applications made forgotten)."""
    applied = dict(
        run.proposals.filter(status__in=(Proposal.Status.LINKED, Proposal.Status.MERGED))
        .order_by()
        .values_list("status")
        .annotate(count=Count("pk"))
    )
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
    return {
        "unlink": applied.get(Proposal.Status.LINKED, 0),
        # A merge a curator reverted since is not undone again (`sweep_reverse`).
        "unmerge": applied.get(Proposal.Status.MERGED, 0)
        - _merges_reverted_since(run, last_reverse),
        "propose_again": run.proposals.filter(
            pk__in=discarded, status=Proposal.Status.DISCARDED
        ).count(),
        "distinct_again": run.proposals.filter(status=Proposal.Status.DISTINCT).count(),
    }
