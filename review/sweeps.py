"""Consolidation sweeps: find duplicates already in the store, propose before acting, apply at a
chosen threshold, and reverse in bulk.

Candidates come from the same indexed lookups and full-text blocking as the write path, one query
per drawer within its scope (a room; a diary per agent), so a sweep costs roughly linear time in
the room, not the square of it. A pair already linked, decided, remembered as distinct or
proposed before is never proposed again: sweeping the same data twice proposes nothing new.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from dedup import candidates, policy
from dedup.errors import Conflict, DomainError, InvalidInput
from dedup.services import candidates_for_text, drawer_link
from palace.models import (
    AuditAction,
    AuditEntry,
    AuditTarget,
    DistinctPair,
    Drawer,
    DrawerLink,
    Entity,
    EntityAlias,
    EntityLink,
    Mention,
    Room,
)
from review import services as decisions
from review.diff import differing_numbers
from review.models import Proposal, SweepRun
from review.selectors import similarity_band

logger = logging.getLogger("castellan.sweeps")

DRAWER_TIERS = ("exact", "normalized", "near")
ENTITY_TIERS = ("exact", "normalized", "alias", "typo", "possible")
MERGE_TIERS = ("exact", "normalized")
Progress = Callable[[int, int], None]


def start(
    *,
    wing: str = "",
    room: str = "",
    threshold: float,
    same_kind: bool = True,
    entities: bool = False,
    actor=None,
) -> SweepRun:
    """Record a run (queued). `execute` does the work, in a worker or in the command."""
    if not 0.5 <= threshold <= 1.0:
        raise InvalidInput("threshold must be a number from 0.5 to 1.")
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


def execute(run: SweepRun, *, progress: Progress = lambda done, total: None) -> SweepRun:
    """Sweep and write the proposals. Proposals are written as they are found, so a crashed run
    keeps what it found and a second run does not propose it again."""
    run.status, run.started_at = SweepRun.Status.RUNNING, timezone.now()
    run.save(update_fields=["status", "started_at"])
    try:
        counts = _sweep_entities(run, progress) if run.entities else _sweep_drawers(run, progress)
    except Exception as error:
        run.status, run.error, run.finished_at = SweepRun.Status.FAILED, str(error), timezone.now()
        run.save(update_fields=["status", "error", "finished_at"])
        logger.exception("sweep %s failed", run.pk)
        raise
    run.status, run.counts, run.finished_at = SweepRun.Status.DONE, counts, timezone.now()
    run.save(update_fields=["status", "counts", "compared", "done", "finished_at"])
    logger.info("sweep %s done: %s", run.pk, counts)
    return run


# --- drawers -----------------------------------------------------------------------------------


def _scopes(run: SweepRun) -> Iterable[candidates.Scope]:
    rooms = Room.objects.select_related("wing").order_by("pk")
    if run.wing:
        rooms = rooms.filter(wing__name=run.wing)
    if run.room:
        rooms = rooms.filter(name=run.room)
    for room in rooms:
        if room.name == "diary":  # each agent's diary is its own scope
            agents = Drawer.objects.current().filter(room=room).values_list("agent", flat=True)
            for agent in sorted(set(agents)):
                yield candidates.Scope(room=room, agent=agent)
        else:
            yield candidates.Scope(room=room)


def _known_pairs(kind: str, ids: set[int]) -> set[tuple[int, int]]:
    """Pairs (newer, older) among these rows that are linked, distinct or proposed already."""
    link = DrawerLink if kind == "drawer" else EntityLink
    known = set(link.objects.filter(newer_id__in=ids).values_list("newer_id", "older_id")) | set(
        Proposal.objects.filter(kind=kind, newer_id__in=ids).values_list("newer_id", "older_id")
    )
    for low, high in DistinctPair.objects.filter(kind=kind, high__in=ids).values_list(
        "low", "high"
    ):
        known.add((high, low))
    return known


def _sweep_drawers(run: SweepRun, progress: Progress) -> dict[str, int]:
    scopes = list(_scopes(run))
    run.total = sum(scope.drawers().count() for scope in scopes)
    run.save(update_fields=["total"])
    counts: dict[str, int] = {}
    for scope in scopes:
        rows = (
            scope.drawers()
            .order_by("pk")
            .values_list("pk", "content_hash", "normalized_content", "fingerprint")
        )
        batch: list[tuple[int, policy.Text]] = []
        for pk, content_hash, normalized, fingerprint in rows.iterator(chunk_size=1000):
            batch.append((pk, policy.Text(content_hash, normalized, fingerprint)))
            if len(batch) == 200:
                _sweep_batch(run, scope, batch, counts, progress)
                batch = []
        if batch:
            _sweep_batch(run, scope, batch, counts, progress)
    return counts


def _sweep_batch(run, scope, batch, counts, progress) -> None:
    found: list[tuple[int, candidates.Candidate, policy.Assessment]] = []
    for pk, text in batch:
        hits = candidates_for_text(
            candidates.Scope(room=scope.room, agent=scope.agent, exclude_id=pk),
            text,
            threshold=run.threshold,
            groups=candidates.SWEEP_LEXICAL_GROUPS,
        )
        seen: set[int] = set()
        for candidate in [*hits.same, *hits.lexical]:
            if candidate.id >= pk or candidate.id in seen:  # each pair once, from its newer side
                continue
            seen.add(candidate.id)
            run.compared += 1
            old = policy.Text(
                candidate.content_hash, candidate.normalized_content, candidate.fingerprint
            )
            assessment = policy.assess(text, old, threshold=run.threshold)
            if assessment.verdict is not None:
                found.append((pk, candidate, assessment))
    if found:
        _propose_drawer_pairs(run, found, counts)
    run.done += len(batch)
    SweepRun.objects.filter(pk=run.pk).update(done=run.done, compared=run.compared)
    progress(run.done, run.total)


def _propose_drawer_pairs(run, found, counts) -> None:
    ids = {pk for pk, _, _ in found} | {c.id for _, c, _ in found}
    known = _known_pairs("drawer", ids)
    drawers = {d.pk: d for d in Drawer.objects.filter(pk__in=ids).only("pk", "content", "kind")}
    mentioned: dict[int, set[int]] = {}
    for drawer_id, entity_id in Mention.objects.filter(drawer_id__in=ids).values_list(
        "drawer_id", "entity_id"
    ):
        mentioned.setdefault(drawer_id, set()).add(entity_id)
    proposals = []
    for pk, candidate, assessment in found:
        if (pk, candidate.id) in known:
            continue
        newer, older = drawers[pk], drawers[candidate.id]
        gates = drawer_gates(
            newer, older, mentioned.get(pk, set()), mentioned.get(candidate.id, set())
        )
        if run.same_kind and gates["same_kind"] is False:
            counts["skipped_kind"] = counts.get("skipped_kind", 0) + 1
            continue
        tier = str(assessment.verdict)
        counts[tier] = counts.get(tier, 0) + 1
        proposals.append(
            Proposal(
                run=run,
                kind=Proposal.Kind.DRAWER,
                newer_id=pk,
                older_id=candidate.id,
                tier=tier,
                score=assessment.signals.similarity,
                gates={**gates, "signals": assessment.signals.as_dict()},
                texts={"newer": newer.content, "older": older.content},
            )
        )
    Proposal.objects.bulk_create(proposals, ignore_conflicts=True)


def drawer_gates(newer: Drawer, older: Drawer, newer_entities: set, older_entities: set) -> dict:
    """Each gate is True (passed), False (failed) or None (does not apply)."""
    only_older, only_newer = differing_numbers(older.content, newer.content)
    return {
        # An event and the state it produced are not duplicates.
        "same_kind": (newer.kind == older.kind) if newer.kind and older.kind else None,
        # The same words about different people are not duplicates.
        "same_entities": (newer_entities == older_entities)
        if newer_entities and older_entities
        else None,
        "numbers_differ": bool(only_older or only_newer),
    }


def gates_pass(gates: dict) -> bool:
    return (
        gates.get("same_kind") is not False
        and gates.get("same_entities") is not False
        and not gates.get("numbers_differ")
    )


# --- entities ----------------------------------------------------------------------------------


def _sweep_entities(run: SweepRun, progress: Progress) -> dict[str, int]:
    """Resolve each existing entity against the older ones, with the write path's rules: what
    would have converged, or been linked as a possible match, is proposed."""
    entities = Entity.objects.filter(redirect_to__isnull=True).order_by("pk")
    run.total = entities.count()
    run.save(update_fields=["total"])
    counts: dict[str, int] = {}
    for entity in entities.iterator(chunk_size=500):
        pool = {
            e.pk: e
            for query in (
                candidates.entities_matching(kind=entity.kind, name=entity.name, key=entity.key),
                candidates.entities_in_key_band(kind=entity.kind, key_length=entity.key_length),
            )
            for e in query.filter(pk__lt=entity.pk)
        }
        aliases: dict[int, list[str]] = {}
        for owner, alias in EntityAlias.objects.filter(entity_id__in=pool).values_list(
            "entity_id", "alias"
        ):
            aliases.setdefault(owner, []).append(alias)
        known = [
            policy.EntityCandidate(
                e.pk, e.name, e.kind, tuple(aliases.get(e.pk, ())), age=e.pk, key=e.key
            )
            for e in pool.values()
        ]
        run.compared += len(known)
        result = policy.resolve(entity.name, entity.kind, known, True)
        pairs = (
            [(result.entity, str(result.rule), result.confidence)]
            if result.entity
            else [(p.entity, "possible", p.similarity) for p in result.possible]
        )
        pairs = [(older, tier, score) for older, tier, score in pairs if older != entity.pk]
        if pairs:
            already = _known_pairs("entity", {entity.pk})
            new = [
                Proposal(
                    run=run,
                    kind=Proposal.Kind.ENTITY,
                    newer_id=entity.pk,
                    older_id=older,
                    tier=tier,
                    score=score,
                    gates={"distance": policy.edit_distance(entity.key, pool[older].key)},
                    texts={"newer": entity.name, "older": pool[older].name},
                )
                for older, tier, score in pairs
                if (entity.pk, older) not in already
            ]
            for proposal in new:
                counts[proposal.tier] = counts.get(proposal.tier, 0) + 1
            Proposal.objects.bulk_create(new, ignore_conflicts=True)
        run.done += 1
        if run.done % 200 == 0 or run.done == run.total:
            SweepRun.objects.filter(pk=run.pk).update(done=run.done, compared=run.compared)
            progress(run.done, run.total)
    return counts


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
    actor=None,
) -> Applied:
    """Turn the run's proposals at or above `threshold` (in `tiers`) into links, and merge those
    in `merge_tiers` whose gates all pass. One audited batch; `reverse` undoes it."""
    if run.status != SweepRun.Status.DONE:
        raise Conflict("Only a finished run can be applied.", code="run_not_done")
    tiers = set(tiers or (ENTITY_TIERS if run.entities else DRAWER_TIERS))
    merge_tiers = set(merge_tiers)
    batch = uuid.uuid4()
    linked = merged = discarded = 0
    with transaction.atomic():
        proposals = run.proposals.select_for_update().filter(status=Proposal.Status.PROPOSED)
        for proposal in proposals.order_by("pk"):
            if proposal.score < threshold or proposal.tier not in tiers:
                if discard_below:
                    proposal.status = Proposal.Status.DISCARDED
                    proposal.save(update_fields=["status"])
                    discarded += 1
                continue
            link = _link_for(proposal)
            if link is None:  # a side is gone or superseded since, or a curator said distinct
                continue
            proposal.applied_link = link.pk
            proposal.status = Proposal.Status.LINKED
            if (
                proposal.kind == Proposal.Kind.DRAWER
                and proposal.tier in merge_tiers
                and gates_pass(proposal.gates)
            ):
                decisions.decide(
                    item=decisions.ItemRef.of(link),
                    action="merge",
                    actor=actor,
                    batch=batch,
                    note=f"sweep {run.pk}",
                    evidence={"sweep": run.pk, "proposal": proposal.pk},
                )
                proposal.status = Proposal.Status.MERGED
                merged += 1
            else:
                linked += 1
            proposal.save(update_fields=["status", "applied_link"])
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.SWEEP_APPLY,
            target_type=AuditTarget.SWEEP,
            target_id=run.pk,
            after={
                "threshold": threshold,
                "tiers": sorted(tiers),
                "merge_tiers": sorted(merge_tiers),
                "linked": linked,
                "merged": merged,
                "discarded": discarded,
            },
            batch=batch,
        )
    return Applied(batch, linked, merged, discarded)


def _link_for(proposal: Proposal):
    if proposal.kind == Proposal.Kind.DRAWER:
        newer = Drawer.objects.current().filter(pk=proposal.newer_id).first()
        older = Drawer.objects.current().filter(pk=proposal.older_id).first()
        if newer is None or older is None:
            return None
        try:
            link, _ = drawer_link(
                newer=newer,
                older=older,
                verdict=proposal.tier,
                signals=proposal.gates.get("signals", {}),
            )
        except Conflict:
            return None
        return link
    low, high = DistinctPair.ordered(proposal.newer_id, proposal.older_id)
    if DistinctPair.objects.filter(kind="entity", low=low, high=high).exists():
        return None
    if Entity.objects.filter(pk__in=(proposal.newer_id, proposal.older_id)).count() != 2:
        return None
    link, _ = EntityLink.objects.get_or_create(
        newer_id=proposal.newer_id,
        older_id=proposal.older_id,
        defaults={"similarity": proposal.score, "distance": proposal.gates.get("distance")},
    )
    return link


def reverse(run: SweepRun, *, actor=None) -> int:
    """Undo everything the run's application did, to the exact prior state, in one audited
    batch: merges are reverted, links it made are removed. Later writes are left untouched."""
    batch = uuid.uuid4()
    undone = 0
    with transaction.atomic():
        applied = run.proposals.select_for_update().filter(
            status__in=(Proposal.Status.LINKED, Proposal.Status.MERGED)
        )
        merge_entries = {
            entry.data.get("evidence", {}).get("proposal"): entry
            for entry in AuditEntry.objects.filter(
                action="review.merge", data__evidence__sweep=run.pk
            )
        }
        for proposal in applied.order_by("-pk"):
            entry = merge_entries.get(proposal.pk)
            merged = proposal.status == Proposal.Status.MERGED and entry is not None
            if merged and decisions.reverts_of(entry) is None:
                decisions.revert(decision=entry, actor=actor)
            model = DrawerLink if proposal.kind == Proposal.Kind.DRAWER else EntityLink
            model.objects.filter(pk=proposal.applied_link, status="open").delete()
            proposal.status, proposal.applied_link = Proposal.Status.PROPOSED, None
            proposal.save(update_fields=["status", "applied_link"])
            undone += 1
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.SWEEP_REVERSE,
            target_type=AuditTarget.SWEEP,
            target_id=run.pk,
            after={"undone": undone},
            batch=batch,
        )
    return undone


def draw_sample(run: SweepRun, *, per_stratum: int = 5, actor=None) -> int:
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


def judge(proposal: Proposal, *, verdict: str, actor=None, note: str = "", batch=None):
    """A curator's verdict on a proposal: the same thing, or not. Nothing is applied; the
    verdicts measure the run's precision. Audited as a review decision on item p<id>, so it is
    refused when already given and can be reverted like any decision."""
    if verdict not in ("same", "wrong"):
        raise InvalidInput("verdict must be 'same' or 'wrong'.", code="invalid_action")
    ref = decisions.ItemRef("p", proposal.pk)
    with transaction.atomic():
        proposal = Proposal.objects.select_for_update().get(pk=proposal.pk)
        if proposal.verdict:
            raise decisions.already_decided(ref)
        proposal.verdict = verdict
        proposal.save(update_fields=["verdict"])
        return AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.decision(verdict),
            target_type=decisions.ITEM_TARGET,
            target_id=ref,
            before={"verdict": ""},
            after={"verdict": verdict},
            data={
                "item": str(ref),
                "run": proposal.run_id,
                "touches": [f"proposal:{proposal.pk}"],
                "note": note,
            },
            batch=batch,
        )


def precision(run: SweepRun) -> list[dict]:
    """From the judged sample: per tier and band, how many were judged and the share the same."""
    rows: dict[tuple[str, str], dict] = {}
    for tier, score, verdict, sampled in run.proposals.values_list(
        "tier", "score", "verdict", "sampled"
    ):
        row = rows.setdefault(
            (tier, similarity_band(score)), {"proposals": 0, "sampled": 0, "same": 0, "wrong": 0}
        )
        row["proposals"] += 1
        row["sampled"] += sampled
        if verdict:
            row[verdict] += 1
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


def proposals_for(run: SweepRun, *, tier: str = "", status: str = ""):
    queryset = run.proposals.all()
    if tier:
        queryset = queryset.filter(tier=tier)
    if status:
        queryset = queryset.filter(status=status)
    return queryset


def summary(run: SweepRun) -> dict:
    """Per tier: proposals, and what applying at each threshold would do."""
    rows = {}
    for tier, score, gates in run.proposals.values_list("tier", "score", "gates"):
        row = rows.setdefault(tier, {"proposals": 0, "scores": []})
        row["proposals"] += 1
        row["scores"].append((score, gates_pass(gates)))
    what_if = {}
    for threshold in (0.9, 0.95, 0.98, 1.0):
        links = merges = 0
        for tier, row in rows.items():
            for score, passed in row["scores"]:
                if score >= threshold:
                    if tier in MERGE_TIERS and passed and not run.entities:
                        merges += 1
                    else:
                        links += 1
        what_if[f"{threshold:.2f}"] = {"links": links, "merges": merges}
    return {
        "tiers": {tier: row["proposals"] for tier, row in rows.items()},
        "if_applied_at": what_if,
    }
