"""Entities that answer for themselves again (a curator's alias or merge undone) get the links
their absence kept from the entities created meanwhile.

A sighting's fuzzy lookups skip an entity that redirects to another, so a name sighted while a
curator's alias or merge held was never judged against the entity that decision redirected: once
the decision is undone, the two stood unlinked (a helper's soak over HTTP found such a pair, and
only an entity sweep proposed it). The undo now judges each entity created since the decision
against the one it made current, as that entity's sighting would have, and writes the links.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q

from dedup import candidates, policy
from dedup.locks import bands_counted
from dedup.services.inserts import insert_unless_conflict
from palace.models import PERSON_ALIAS_SOURCES, DistinctPair, Entity, EntityAlias, EntityLink

_LINK_UNIQUE = ("newer_id", "older_id")  # entity_link_unique_pair


def current_again_counted(entity_ids: list[int]) -> None:
    """Count the entities an undo is about to make current again in the key bands, as creations
    (`dedup.locks.bands_counted`): a name within reach sighted while the undo runs looks again
    after its commit, or the undo waits for that sighting's commit and judges its entity. Taken
    before the rows the undo holds (the canonical order). PostgreSQL only; keys too short for a
    fuzzy rule count in no band."""
    keys = Entity.objects.filter(pk__in=entity_ids, redirect_to__isnull=False)
    lengths = [
        length
        for length in keys.values_list("key_length", flat=True)
        if length >= policy.MIN_POSSIBLE_KEY_CHARS
    ]
    bands_counted(lengths)


def entity_links_since(entity_id: int, *, since: datetime) -> list[EntityLink]:
    """Link the entity, current again, to every current entity created since `since` (the undone
    decision's time) that would have linked to it: within two edits of its key or of an alias a
    person recorded for it, judged by the policy from the newer entity's side, as its sighting
    was. No pair linked already, or recorded distinct, is linked again. In the caller's
    transaction, with the entity held (a revert holds what it touches)."""
    entity = Entity.objects.filter(pk=entity_id, redirect_to__isnull=True).first()
    if entity is None or entity.key_length < policy.MIN_POSSIBLE_KEY_CHARS:
        return []
    aliases = list(
        EntityAlias.objects.filter(entity=entity, source__in=PERSON_ALIAS_SOURCES).values_list(
            "alias", "key"
        )
    )
    ids: set[int] = set()
    for key in {entity.key, *(key for _, key in aliases)}:
        ids.update(candidates.owners_within_reach(key)[0])
    since_then = candidates.entities_by_id(kind=policy.VAGUE_KIND, ids=sorted(ids)).filter(
        pk__gt=entity.pk, created_at__gte=since
    )
    newer = list(since_then.order_by("pk"))
    settled = _settled(entity, [other.pk for other in newer])
    newer = [other for other in newer if other.pk not in settled]
    as_candidate = policy.EntityCandidate(
        id=entity.pk,
        name=entity.name,
        kind=entity.kind,
        aliases=tuple(alias for alias, _ in aliases),
        age=entity.pk,
        key=entity.key,
        typo_aliases=tuple(alias for alias, _ in aliases),
    )
    links = []
    for other in newer:
        link = _judged(other, entity, as_candidate)
        if link is not None and insert_unless_conflict(link, _LINK_UNIQUE):
            links.append(link)
    return links


def _settled(entity: Entity, others: list[int]) -> set[int]:
    """Those of the others linked with the entity already (either way) or recorded distinct
    from it: two statements, however many."""
    if not others:
        return set()
    links = EntityLink.objects.filter(
        Q(newer_id__in=others, older=entity) | Q(newer=entity, older_id__in=others)
    )
    low, high = DistinctPair.columns(DistinctPair.Kind.ENTITY)
    distinct = DistinctPair.objects.filter(
        Q(**{f"{low}": entity, f"{high}_id__in": others})
        | Q(**{f"{high}": entity, f"{low}_id__in": others})
    )
    return {
        pk
        for pair in (
            links.values_list("newer_id", "older_id"),
            distinct.values_list(f"{low}_id", f"{high}_id"),
        )
        for both in pair
        for pk in both
    } - {entity.pk}


def _judged(
    newer: Entity, older: Entity, as_candidate: policy.EntityCandidate
) -> EntityLink | None:
    """The link the newer entity's sighting would have made to the older one, had it seen it: a
    possible match, or a typo (which would have converged: a link is what can be written now)."""
    resolution = policy.resolve(newer.name, newer.kind, [as_candidate], True)
    if resolution.entity == older.pk:
        if resolution.rule is not policy.Rule.TYPO:  # the named rules read redirected entities
            return None
        distance, similarity = 1, resolution.confidence
    else:
        match = next((m for m in resolution.possible if m.entity == older.pk), None)
        if match is None:
            return None
        distance, similarity = match.distance, match.similarity
    return EntityLink(newer=newer, older=older, similarity=similarity, distance=distance)
