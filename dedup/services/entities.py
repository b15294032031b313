"""Entities: a sighted name resolved to a known entity on safe evidence (or a new one), and the
mentions that record a drawer naming it. Aliases recorded by hand are `entity_aliases`'.

Nothing is merged and no name is rewritten here; merges are a curator's decision (review).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from django.db import IntegrityError, transaction

from dedup import candidates, metrics, policy
from dedup.errors import InvalidInput, NotFound
from dedup.locks import creations_meanwhile, lock_key
from dedup.services.config import DedupConfig
from dedup.services.inserts import entity_insert_indexed, insert_unless_conflict
from dedup.validation import clean_entity_name, clean_kind, clean_metadata
from palace.models import Drawer, Entity, EntityAlias, EntityLink, Mention

logger = logging.getLogger("castellan.dedup")
KEY_MAX_LENGTH = 200  # the entity's and the alias's key columns (a test holds them equal)


@dataclass(frozen=True)
class EntityResolution:
    entity: Entity
    created: bool
    rule: policy.Rule
    confidence: float
    possible: tuple[EntityLink, ...] = field(default=())
    # A new entity's mention, written with it when a sighting asked for one (`mention_add`):
    # unsaved if its drawer was gone.
    mention: Mention | None = field(default=None, repr=False)


@dataclass(frozen=True)
class _Sighting:
    """Where a name was sighted: the drawer (and provenance) of a mention to record."""

    drawer: Drawer
    provenance: dict[str, Any]

    def first_mention(self, name: str) -> Mention:
        """The mention of the sighting that created its entity: it named it exactly."""
        observation = _observation(name, policy.Rule.EXACT, 1.0)
        return Mention(drawer=self.drawer, observation=observation, provenance=self.provenance)


@dataclass(frozen=True)
class MentionWrite:
    mention: Mention
    created: bool
    resolution: EntityResolution


def entity_resolve(
    *,
    name: str,
    kind: str = policy.VAGUE_KIND,
    config: DedupConfig | None = None,
    record_alias: bool = True,
) -> EntityResolution:
    """Resolve a sighted name to a known entity on safe evidence, or create a new one.

    A converged spelling joins the entity's aliases, unless `record_alias` is false (a key of
    some wings: an alias steers the entity's sightings in every wing); a new entity that merely
    resembles others is linked to each with possibly_same_as. Nothing is merged and no name is
    rewritten.
    """
    return _resolve(name, kind, config, None, record_alias)


def _resolve(
    name: str,
    kind: str,
    config: DedupConfig | None,
    sighting: _Sighting | None,
    record_alias: bool = True,
) -> EntityResolution:
    """`entity_resolve`; if the entity is new and there is a `sighting`, its mention is written
    with it (on PostgreSQL in the same statement) and returned in the resolution."""
    name = clean_entity_name(name, "name")
    kind = clean_kind(kind, default=policy.VAGUE_KIND)
    config = config or DedupConfig.from_settings()
    key = key_of(name, "name")
    # No savepoint inside a caller's transaction: nothing here is retried after a failed
    # statement (a lost race to create the entity is an insert that did nothing, below).
    with transaction.atomic(savepoint=False):
        # The entity's lock is taken by the lookups' own statement (on PostgreSQL, one round trip).
        lock = lock_key("entity", key)
        resolution = _entity_resolve_locked(name, kind, key, config, lock, sighting, record_alias)
        if resolution is None:
            # Another writer created the same (name, kind) between our read and our insert (one
            # that took no lock): resolved again, this one sees it and converges on it.
            resolution = _entity_resolve_locked(
                name, kind, key, config, None, sighting, record_alias
            )
        if resolution is None:  # pragma: no cover - the row that conflicted is visible now
            raise IntegrityError(f"entity {name!r} ({kind}) conflicts but is not found")
        metrics.entity_resolved(resolution.rule)
        return resolution


def key_of(label: str, field: str) -> str:
    """The label's key, if it fits the key column: casefolding can lengthen a name ("ß" is
    "ss"), so a name within its bound may have a key beyond it, which is refused here rather
    than cut (two keys cut alike would converge)."""
    key = policy.entity_key(label)
    if len(key) > KEY_MAX_LENGTH:
        raise InvalidInput(
            f"{field} is too long once its case is folded: its key would have {len(key)} "
            f"characters, at most {KEY_MAX_LENGTH}.",
            details={"field": field},
        )
    return key


def canonical_entity(entity: Entity) -> Entity:
    """Follow the redirects a curator made (alias or merge) to the entity that now answers."""
    return canonical_entities([entity])[entity.pk]


def canonical_entities(entities: Iterable[Entity]) -> dict[int, Entity]:
    """`canonical_entity` of each entity, by id: one query a step along the redirects, for all
    of them at once (none when none is redirected)."""
    canonical = {entity.pk: entity for entity in entities}
    seen = {pk: {pk} for pk in canonical}
    pending = [pk for pk, entity in canonical.items() if entity.redirect_to_id is not None]
    while pending:
        read = Entity.objects.in_bulk({canonical[pk].redirect_to_id for pk in pending})
        for pk in pending:
            canonical[pk] = read[canonical[pk].redirect_to_id]
            if canonical[pk].pk in seen[pk]:  # pragma: no cover - decisions never make a cycle
                raise RuntimeError(f"redirect cycle at entity {canonical[pk].pk}")
            seen[pk].add(canonical[pk].pk)
        pending = [pk for pk in pending if canonical[pk].redirect_to_id is not None]
    return canonical


def _entity_resolve_locked(
    name: str,
    kind: str,
    key: str,
    config: DedupConfig,
    lock: int | None,
    sighting: _Sighting | None,
    record_alias: bool,
) -> EntityResolution | None:
    """The resolution under the entity's lock (taken first, unless None: held already), or None
    if the entity to create was created meanwhile by another. A spelling that converged joins
    the entity's aliases if `record_alias`."""
    found = candidates.name_lookup(  # PostgreSQL: one statement; SQLite: one to three
        kind=kind, name=name, key=key, fuzzy=config.entity_fuzzy, lock=lock
    )
    known, by_id, all_aliases = known_entities(found)
    resolution = policy.resolve(name, kind, known, config.entity_fuzzy)
    if resolution.entity is None and found.named and config.entity_fuzzy:
        # Named entities that do not converge (their numbers differ): the typo rule may still
        # reach another within two edits, which the lookup left unread once it named some.
        found = candidates.NameLookup(
            found.named, candidates.known_within_reach(kind, key), found.bands
        )
        known, by_id, all_aliases = known_entities(found)
        resolution = policy.resolve(name, kind, known, config.entity_fuzzy)
    if resolution.entity is None:
        if _created_meanwhile(key, found, first_look=lock is not None):
            # An entity of a near key may have been created since the lookup: look again. The
            # bands are held now (as the entity's lock), so the second look is the last.
            return _entity_resolve_locked(name, kind, key, config, None, sighting, record_alias)
        return _entity_create(name, kind, key, resolution, by_id, sighting)
    reached = by_id[cast(int, resolution.entity)]  # the known are ids
    entity = canonical_entity(reached)
    if entity.pk != reached.pk:
        # A curator's alias or merge led here, not the entity's own name.
        resolution = policy.through_redirect(resolution)
    recorded = all_aliases.get(entity.pk)
    if record_alias and name != entity.name and (recorded is None or name not in recorded):
        # One statement, no savepoint: an alias recorded meanwhile is left as it is.
        insert_unless_conflict(EntityAlias(entity=entity, alias=name, key=key), _ALIAS_UNIQUE)
    return EntityResolution(entity, False, resolution.rule, resolution.confidence)


_ALIAS_UNIQUE = ("entity_id", "alias")  # entity_alias_unique


def _created_meanwhile(key: str, found: candidates.NameLookup, *, first_look: bool) -> bool:
    """Whether an entity the name could resolve to or resemble may have been created since the
    lookup (`creations_meanwhile`), on PostgreSQL. Asked on the first look only (a second one
    runs with the bands held already), and not for a key too short for any rule but the exact
    ones, which the entity's own lock serialises."""
    if not first_look or found.bands is None or len(key) < policy.MIN_POSSIBLE_KEY_CHARS:
        return False
    return creations_meanwhile(len(key), found.bands)


def known_entities(
    found: candidates.NameLookup,
) -> tuple[list[policy.EntityCandidate], dict[int, Entity], dict[int, tuple[str, ...]]]:
    """The entities the name may resolve to, as the policy sees them, by id, and (from the
    exact lookups, which read them all) each one's aliases."""
    matching = found.named
    named = {m.entity.id for m in matching}
    band = [m for m in found.reached if m.entity.id not in named]  # fuzzy matching's, if asked
    known = [policy_candidate(m.entity, m.aliases) for m in matching]
    known += [policy_candidate(m.entity, m.aliases, typo=True) for m in band]
    by_id = {m.entity.id: m.entity for m in [*matching, *band]}
    return known, by_id, _aliases_by_id(matching)


def _aliases_by_id(known: list[candidates.KnownEntity]) -> dict[int, tuple[str, ...]]:
    return {m.entity.id: m.aliases for m in known}


def policy_candidate(
    entity: Entity, aliases: Iterable[str] = (), *, typo: bool = False
) -> policy.EntityCandidate:
    """The entity as the policy sees it; with `typo`, its aliases (only those a person recorded)
    serve the typo rule too."""
    aliases = tuple(aliases)
    return policy.EntityCandidate(
        id=entity.id,
        name=entity.name,
        kind=entity.kind,
        aliases=aliases,
        age=entity.id,
        key=entity.key,
        typo_aliases=aliases if typo else (),
    )


def _entity_create(
    name: str,
    kind: str,
    key: str,
    resolution: policy.Resolution,
    by_id: dict[int, Entity],
    sighting: _Sighting | None,
) -> EntityResolution | None:
    """A new entity, linked possibly_same_as to each entity it merely resembles, with the
    sighting's mention if any; None if another writer created the same (name, kind) meanwhile."""
    entity = Entity(name=name, kind=kind, key=key, key_length=len(key))
    links = [
        EntityLink(
            newer=entity,
            older=by_id[cast(int, match.entity)],
            similarity=match.similarity,
            distance=match.distance,
        )
        for match in resolution.possible
    ]
    first = sighting.first_mention(name) if sighting is not None else None
    if not entity_insert_indexed(entity, links, first):
        return None
    if links:
        logger.info(
            "entity %r (%s) is new; possibly_same_as %s",
            name,
            kind,
            ", ".join(repr(link.older.name) for link in links),
        )
    return EntityResolution(entity, True, resolution.rule, 1.0, tuple(links), first)


def mention_add(
    *,
    drawer: Drawer,
    name: str,
    kind: str = policy.VAGUE_KIND,
    provenance: dict[str, Any] | None = None,
    config: DedupConfig | None = None,
    record_alias: bool = True,
) -> MentionWrite:
    """Record that a drawer names an entity, resolving the name first (`entity_resolve`: a
    spelling that converged joins the entity's aliases unless `record_alias` is false; the
    mention keeps it as written either way). The drawer is held until commit (after the
    entity's lock, in the canonical order) by the mention's own insert; one deleted meanwhile
    is NotFound, and nothing is written."""
    provenance = clean_metadata(provenance, "provenance")
    with transaction.atomic():
        # A new entity's mention is written with it (on PostgreSQL, in its statement).
        sighting = _Sighting(drawer, provenance or {})
        resolution = _resolve(name, kind, config, sighting, record_alias)
        if resolution.created:
            first = cast(Mention, resolution.mention)
            if first.pk is None:  # its drawer is gone: nothing is written
                raise NotFound("No drawer with that id.", code="drawer_not_found")
            return MentionWrite(first, True, resolution)
        mention = Mention(
            drawer=drawer,
            entity=resolution.entity,
            observation=_observation(name, resolution.rule, resolution.confidence),
            provenance=provenance or {},
        )
        # One statement holds the drawer and inserts the mention; nothing inserted means the
        # mention was made before (read here: one statement) or the drawer is gone (none is).
        created = insert_unless_conflict(mention, ("drawer_id", "entity_id"), holding=drawer)
        if not created:
            recorded = Mention.objects.filter(drawer=drawer, entity=resolution.entity).first()
            if recorded is None:
                raise NotFound("No drawer with that id.", code="drawer_not_found")
            recorded.drawer = mention.drawer  # as given: not read again for the answer
            mention = recorded
    return MentionWrite(mention, created, resolution)


def _observation(name: str, rule: policy.Rule, confidence: float) -> dict[str, Any]:
    """How a sighting reached its entity (one that created it named it exactly)."""
    return {"name": name.strip(), "rule": str(rule), "confidence": confidence}
