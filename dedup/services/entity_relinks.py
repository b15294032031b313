"""Entities that answer for themselves again (a curator's alias or merge undone) get the links
their absence kept from the entities named meanwhile.

A sighting's fuzzy lookups skip an entity that redirects to another, so a name sighted while a
curator's alias or merge held was never judged against the entity that decision redirected: once
the decision is undone, the two stood unlinked (a helper's soak over HTTP found such a pair, and
only an entity sweep proposed it). The undo now judges the entity it makes current against every
current entity within reach that one of the two never saw: the newer one was created while the
older one was redirected (`Windows`: when each entity was, from the audit log, which the review
app reads). Each such pair is judged as the newer entity's sighting would have judged it, and
linked. The times compared are the application's clocks: the decision's audit row is written
before its commit and an entity's time is taken after its lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from django.db.models import Q

from dedup import candidates, policy
from dedup.locks import bands_counted
from dedup.services.config import DedupConfig
from dedup.services.entities import policy_candidate
from dedup.services.inserts import insert_unless_conflict
from palace.models import PERSON_ALIAS_SOURCES, DistinctPair, Entity, EntityAlias, EntityLink

# When each entity was redirected: (from, until) for each decision that redirected it, until
# None while it still does or its undo is under way.
Windows = dict[int, list[tuple[datetime, datetime | None]]]

_LINK_UNIQUE = ("newer_id", "older_id")  # entity_link_unique_pair


def current_again_counted(entity_ids: list[int]) -> None:
    """Count the entities an undo is about to make current again in the key bands, as creations
    (`dedup.locks.bands_counted`), by the length of their keys and of the aliases a person
    recorded for them: a name within reach sighted while the undo runs looks again after its
    commit, or the undo waits for that sighting's commit and judges its entity. Taken before
    the rows the undo holds (the canonical order). PostgreSQL only; keys too short for a fuzzy
    rule count in no band."""
    redirected = Entity.objects.filter(pk__in=entity_ids, redirect_to__isnull=False)
    aliases = EntityAlias.objects.filter(entity__in=redirected, source__in=PERSON_ALIAS_SOURCES)
    lengths = [*redirected.values_list("key_length", flat=True)] + [
        len(key) for key in aliases.values_list("key", flat=True)
    ]
    bands_counted(length for length in lengths if length >= policy.MIN_POSSIBLE_KEY_CHARS)


def entity_relinked(entity_id: int, windows: Callable[[list[int]], Windows]) -> list[EntityLink]:
    """Link the entity, current again, to each current entity within reach (of its key or of an
    alias a person recorded for it, either way) that one of the two never saw: the newer was
    created while the older was redirected (`windows`). Linked as the newer one's sighting would
    have linked it: the policy's possible match, or a typo it would have converged on (a link
    at one edit is what can be written now), unless the newer one has links to the five
    closer already (the cap a sighting keeps). A pair linked already, either way, or recorded
    distinct is left. In the caller's transaction, with the entity held (a revert holds what
    it touches)."""
    if not DedupConfig.from_settings().entity_fuzzy:  # sightings link nothing either
        return []
    entity = Entity.objects.filter(pk=entity_id, redirect_to__isnull=True).first()
    if entity is None:
        return []
    others = _within_reach(entity)
    if not others:
        return []
    redirected = windows([entity.pk, *others])
    settled = _settled(entity, list(others))
    pairs = []
    for other in others.values():
        newer, older = (other, entity) if other.pk > entity.pk else (entity, other)
        if other.pk not in settled and _unseen(redirected.get(older.pk, []), newer.created_at):
            pairs.append((newer, older))
    aliases = _person_aliases([older.pk for _, older in pairs])
    closer = _links_of([newer.pk for newer, _ in pairs])
    judged = [_judged(newer, older, aliases.get(older.pk, ())) for newer, older in pairs]
    links = []
    # Closest first, each written link counted: a sighting links the MAX_POSSIBLE closest, so
    # a link the newer entity has that many of, each at least as close, would have been left
    # out (when the entity made current is the newer side of several pairs, its own new links
    # count too).
    for link in sorted(filter(None, judged), key=lambda link: -link.similarity):
        scores = closer.setdefault(link.newer.pk, [])
        if sum(score >= link.similarity for score in scores) >= policy.MAX_POSSIBLE:
            continue
        if insert_unless_conflict(link, _LINK_UNIQUE):
            scores.append(link.similarity)
            links.append(link)
    return links


def _within_reach(entity: Entity) -> dict[int, Entity]:
    """The current entities within two edits of the entity's keys (its name's and its person
    aliases'), or with a person alias within two edits of its name's key: those a sighting of
    either would have judged against the other."""
    keys = {entity.key} | set(
        EntityAlias.objects.filter(entity=entity, source__in=PERSON_ALIAS_SOURCES).values_list(
            "key", flat=True
        )
    )
    ids: set[int] = set()
    for key in keys:
        if len(key) >= policy.MIN_POSSIBLE_KEY_CHARS:
            owners, aliases = candidates.owners_within_reach(key)
            ids.update(owners)
            if key == entity.key and aliases:
                ids.update(
                    EntityAlias.objects.filter(pk__in=aliases).values_list("entity_id", flat=True)
                )
    ids.discard(entity.pk)
    found = candidates.entities_by_id(kind=policy.VAGUE_KIND, ids=sorted(ids))
    return {other.pk: other for other in found.order_by("pk")}


def _unseen(windows: list[tuple[datetime, datetime | None]], created_at: datetime) -> bool:
    """Whether an entity created at `created_at` was created while the other was redirected."""
    return any(
        start <= created_at and (until is None or created_at < until) for start, until in windows
    )


def _settled(entity: Entity, others: list[int]) -> set[int]:
    """Those of the others linked with the entity already (either way) or recorded distinct
    from it: two statements, however many."""
    links = EntityLink.objects.filter(
        Q(newer_id__in=others, older=entity) | Q(newer=entity, older_id__in=others)
    )
    low, high = DistinctPair.columns(DistinctPair.Kind.ENTITY)
    distinct = DistinctPair.objects.filter(
        Q(**{low: entity, f"{high}_id__in": others}) | Q(**{high: entity, f"{low}_id__in": others})
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


def _links_of(newer_ids: list[int]) -> dict[int, list[float]]:
    """The similarities of the links these entities' sightings made, by entity: one statement."""
    scores: dict[int, list[float]] = {}
    made = EntityLink.objects.filter(newer_id__in=newer_ids).values_list("newer_id", "similarity")
    for newer, similarity in made:
        scores.setdefault(newer, []).append(similarity)
    return scores


def _person_aliases(entity_ids: list[int]) -> dict[int, tuple[str, ...]]:
    """The aliases a person recorded for these entities, by entity: one statement."""
    aliases: dict[int, tuple[str, ...]] = {}
    recorded = EntityAlias.objects.filter(entity_id__in=entity_ids, source__in=PERSON_ALIAS_SOURCES)
    for owner, alias in recorded.order_by("alias").values_list("entity_id", "alias"):
        aliases[owner] = (*aliases.get(owner, ()), alias)
    return aliases


def _judged(newer: Entity, older: Entity, aliases: tuple[str, ...]) -> EntityLink | None:
    """The link the newer entity's sighting would have made to the older one, had it seen it: a
    possible match, or a typo (which would have converged: a link is what can be written now)."""
    as_candidate = policy_candidate(older, aliases, typo=True)
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
