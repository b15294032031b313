"""How a sweep finds duplicates already in the store and writes them as proposals.

Candidates come from the same indexed lookups and full-text blocking as the write path, the same
query for each drawer within its scope (a room; a diary per agent), asked for a batch of drawers
at a time (`dedup.candidates.sweep_batch`: one call on PostgreSQL), so a sweep costs roughly linear
time in the room, not the square of it. A pair already linked, decided, remembered as distinct or
proposed before is never proposed again: sweeping the same data twice proposes nothing new.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import cast

from django.db.models import QuerySet

from dedup import candidates, policy
from dedup.candidates import sweep_batch
from dedup.candidates.sweep_rooms import Rooms
from dedup.policy.merge_gates import drawer_gates
from dedup.services import canonical_entities, known_entities
from palace.models import (
    DistinctPair,
    Drawer,
    DrawerLink,
    Entity,
    EntityLink,
    Mention,
    Room,
)
from review.models import Proposal, SweepPart, SweepRun
from review.services import sweep_locks

Found = list[tuple[int, candidates.Candidate, policy.Assessment]]
BATCH = 200  # rows a part does (and commits) at a time


@dataclass
class Tally:
    """What one batch did: pairs compared and proposals per tier."""

    compared: int = 0
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, tier: str) -> None:
        self.counts[tier] = self.counts.get(tier, 0) + 1


def scopes(run: SweepRun) -> Iterable[candidates.Scope]:
    rooms = Room.objects.select_related("wing").order_by("pk")
    if run.wing:
        rooms = rooms.filter(wing__name=run.wing)
    if run.room:
        rooms = rooms.filter(name=run.room)
    for room in rooms:
        if room.is_diary:  # each agent's diary is its own scope
            agents = Drawer.objects.current().filter(room=room).values_list("agent", flat=True)
            for agent in sorted(set(agents)):
                yield candidates.Scope(room=room, agent=agent)
        else:
            yield candidates.Scope(room=room)


def part_rows(run: SweepRun, part: SweepPart) -> QuerySet:
    """The rows a part sweeps: its scope's current drawers (or the unmerged entities) with ids
    from `low_pk` up to, not including, `high_pk`."""
    if run.entities:
        rows: QuerySet = Entity.objects.filter(redirect_to__isnull=True)
    else:
        assert part.room is not None  # a drawer part always has its room
        rows = candidates.Scope(room=part.room, agent=part.agent).drawers()
    return rows.filter(pk__gte=part.low_pk, pk__lt=part.high_pk).order_by("pk")


@dataclass
class Scanned:
    """A batch compared but not yet written: `write` writes its proposals (in the caller's
    transaction) and tallies them."""

    rows: int
    last_pk: int
    tally: Tally
    write: Callable[[], None]


def scan_batch(run: SweepRun, part: SweepPart, rooms: Rooms | None = None) -> Scanned:
    """Compare the next batch of the part after `last_pk`, reading only. No rows left: 0 rows.
    `rooms` keeps the part's room in memory from batch to batch (see `sweep_rooms`)."""
    rows = part_rows(run, part).filter(pk__gt=part.last_pk)
    tally = Tally()
    if run.entities:
        entities = list(rows[:BATCH])
        found = _scan_entities(entities, tally)
        last = entities[-1].pk if entities else part.last_pk
        return Scanned(len(entities), last, tally, lambda: _propose_entity_pairs(run, found, tally))
    batch = [
        (pk, policy.Text(content_hash, normalized, fingerprint))
        for pk, content_hash, normalized, fingerprint in rows.values_list(
            "pk", "content_hash", "normalized_content", "fingerprint"
        )[:BATCH]
    ]
    if not batch:
        return Scanned(0, part.last_pk, tally, lambda: None)
    assert part.room is not None
    scope = candidates.Scope(room=part.room, agent=part.agent)
    pairs = _sweep_batch(run, scope, batch, tally, rooms)
    return Scanned(
        len(batch),
        batch[-1][0],
        tally,
        lambda: _propose_drawer_pairs(run, pairs, tally) if pairs else None,
    )


def _known_pairs(kind: Proposal.Kind, ids: set[int]) -> set[tuple[int, int]]:
    """Pairs (newer, older) among these rows that are linked, distinct or proposed already."""
    link = DrawerLink if kind == Proposal.Kind.DRAWER else EntityLink
    newer, older = f"newer_{kind}", f"older_{kind}"
    known = set(link.objects.filter(newer_id__in=ids).values_list("newer_id", "older_id")) | set(
        Proposal.objects.filter(**{f"{newer}__in": ids}).values_list(newer, older)
    )
    low_column, high_column = DistinctPair.columns(kind)
    distinct = DistinctPair.objects.filter(**{f"{high_column}__in": ids})
    for low, high in distinct.values_list(low_column, high_column):
        known.add((high, low))
    return known


# --- drawers -----------------------------------------------------------------------------------


def _sweep_batch(
    run: SweepRun,
    scope: candidates.Scope,
    batch: list[tuple[int, policy.Text]],
    tally: Tally,
    rooms: Rooms | None,
) -> Found:
    queries = [sweep_batch.query_of(pk, text, run.threshold) for pk, text in batch]
    found_by_id = sweep_batch.for_texts(
        scope, queries, groups=candidates.SWEEP_LEXICAL_GROUPS, rooms=rooms
    )
    found: Found = []
    for pk, text in batch:
        hits = found_by_id[pk]
        seen: set[int] = set()
        for candidate in [*hits.same, *hits.lexical]:
            if candidate.id >= pk or candidate.id in seen:  # each pair once, from its newer side
                continue
            seen.add(candidate.id)
            tally.compared += 1
            old = policy.Text(
                candidate.content_hash, candidate.normalized_content, candidate.fingerprint
            )
            assessment = policy.assess(text, old, threshold=run.threshold)
            if assessment.verdict is not None:
                found.append((pk, candidate, assessment))
    return found


def _propose_drawer_pairs(run: SweepRun, found: Found, tally: Tally) -> None:
    """Write the batch's pairs as proposals, in the caller's transaction. The batch was compared
    outside it, so a drawer may have been deleted or superseded since: the pair is skipped
    (tallied `skipped_gone`). The drawers kept are held until commit (`drawers_held`) so that
    none is deleted before the proposals referring to it commit."""
    ids = {pk for pk, _, _ in found} | {c.id for _, c, _ in found}
    held = sweep_locks.drawers_held(ids)
    known = _known_pairs(Proposal.Kind.DRAWER, held)
    drawers = {d.pk: d for d in Drawer.objects.filter(pk__in=held).only("pk", "content", "kind")}
    mentioned: dict[int, set[int]] = {}
    for drawer_id, entity_id in Mention.objects.filter(drawer_id__in=ids).values_list(
        "drawer_id", "entity_id"
    ):
        mentioned.setdefault(drawer_id, set()).add(entity_id)
    proposals = []
    for pk, candidate, assessment in found:
        if pk not in drawers or candidate.id not in drawers:
            tally.add("skipped_gone")
            continue
        if (pk, candidate.id) in known:
            continue
        newer, older = drawers[pk], drawers[candidate.id]
        gates = drawer_gates(
            newer, older, mentioned.get(pk, set()), mentioned.get(candidate.id, set())
        )
        if run.same_kind and gates["same_kind"] is False:
            tally.add("skipped_kind")
            continue
        tier = str(assessment.verdict)
        tally.add(tier)
        proposals.append(
            Proposal(
                run=run,
                kind=Proposal.Kind.DRAWER,
                newer_drawer_id=pk,
                older_drawer_id=candidate.id,
                tier=tier,
                score=assessment.signals.similarity,
                gates={**gates, "signals": assessment.signals.as_dict()},
                texts={"newer": newer.content, "older": older.content},
            )
        )
    # In pair order: two runs' workers inserting the same pairs wait on each other's unique
    # keys in one order, never in a cycle.
    proposals.sort(key=lambda proposal: (proposal.newer_drawer_id, proposal.older_drawer_id))
    Proposal.objects.bulk_create(proposals, ignore_conflicts=True)


# --- entities ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EntityPair:
    """Two entities the policy would converge or link, the newer (the larger id) and the older,
    found by the swept entity's name (`swept`, its id: one of the two), with the tier, the score
    and the edit distance the policy found (to the other entity's name or to the alias a person
    recorded that matched)."""

    newer: Entity
    older: Entity
    swept: int
    tier: str
    score: float
    distance: int


def _scan_entities(entities: list[Entity], tally: Tally) -> list[EntityPair]:
    """Resolve existing entities against the older ones their names find (`_resolved_pairs`).
    A name led by a curator's redirect to a newer entity makes a pair whose newer side is that
    entity, which its own name may find too, in another batch or part: the pair is proposed from
    one side only, whatever the batches, that entity's if its own resolution finds the pair
    (read again here, for those entities alone), else the swept one's."""
    pairs = _resolved_pairs(entities, tally)
    led_to = {pair.newer.pk: pair.newer for pair in pairs if pair.swept == pair.older.pk}
    if not led_to:
        return pairs
    own = {(p.newer.pk, p.older.pk) for p in _resolved_pairs(list(led_to.values()), Tally())}
    return [
        pair
        for pair in pairs
        if pair.swept == pair.newer.pk or (pair.newer.pk, pair.older.pk) not in own
    ]


def _resolved_pairs(entities: list[Entity], tally: Tally) -> list[EntityPair]:
    """What the write path would make of each entity's name among the older entities it finds
    (`older_lookups`), as it resolves a sighted name: what would have converged, or been linked
    as a possible match. A name that would converge on an entity a curator merged or aliased
    away converges, as a sighting does, on the entity that answers for it now
    (`canonical_entities`: one query a step along the redirects, for the whole batch), by
    alias; on itself, nothing."""
    with candidates.entity_lookups():  # one transaction for the batch's lookups
        lookups = candidates.older_lookups(entities)
    resolved = []
    for entity in entities:
        known, pool, _ = known_entities(lookups[entity.pk])
        tally.compared += len(pool)
        resolved.append((entity, pool, policy.resolve(entity.name, entity.kind, known, True)))
    reached = canonical_entities(
        pool[cast(int, result.entity)]  # the known entities are ids
        for _, pool, result in resolved
        if result.entity is not None
    )
    pairs = []
    for entity, pool, result in resolved:
        if result.entity is None:
            pairs += [
                _entity_pair(
                    entity, pool[cast(int, p.entity)], "possible", p.similarity, p.distance
                )
                for p in result.possible
            ]
            continue
        other = reached[cast(int, result.entity)]
        if other.pk != result.entity:  # through a curator's alias or merge
            result = policy.through_redirect(result)
        if other.pk == entity.pk:
            continue
        # A typo is one edit from the name or from an alias a person recorded; the exact rules
        # match a key or an alias, so the names' keys are what a reviewer compares.
        distance = (
            1 if result.rule == policy.Rule.TYPO else policy.edit_distance(entity.key, other.key)
        )
        pairs.append(_entity_pair(entity, other, str(result.rule), result.confidence, distance))
    return pairs


def _entity_pair(
    swept: Entity, other: Entity, tier: str, score: float, distance: int
) -> EntityPair:
    newer, older = (swept, other) if swept.pk > other.pk else (other, swept)
    return EntityPair(newer, older, swept.pk, tier, score, distance)


def _propose_entity_pairs(run: SweepRun, found: list[EntityPair], tally: Tally) -> None:
    """Write the batch's pairs as proposals, in the caller's transaction, in pair order (see
    `_propose_drawer_pairs`)."""
    already = _known_pairs(Proposal.Kind.ENTITY, {pair.newer.pk for pair in found})
    new = [
        Proposal(
            run=run,
            kind=Proposal.Kind.ENTITY,
            newer_entity_id=pair.newer.pk,
            older_entity_id=pair.older.pk,
            tier=pair.tier,
            score=pair.score,
            gates={"distance": pair.distance},
            texts={"newer": pair.newer.name, "older": pair.older.name},
        )
        for pair in found
        if (pair.newer.pk, pair.older.pk) not in already
    ]
    for proposal in new:
        tally.add(proposal.tier)
    new.sort(key=lambda proposal: (proposal.newer_entity_id, proposal.older_entity_id))
    Proposal.objects.bulk_create(new, ignore_conflicts=True)
