"""The write path. Every drawer, mention, alias, supersession and deletion is written here, by
the API, the admin, and the management commands alike.

Each public function owns one transaction: the candidate queries, the verdicts, the rows, the links
and the audit entry commit together or not at all.
"""

from __future__ import annotations

import enum
import hashlib
import json
import logging
import uuid as uuid_module
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from dedup import candidates, policy
from dedup.errors import Conflict, DrawerNameTaken, InvalidInput
from dedup.locks import advisory_lock, hold_lock, lock_key
from dedup.validation import (
    clean_content,
    clean_kind,
    clean_label,
    clean_optional_label,
)
from palace.models import (
    AuditAction,
    AuditEntry,
    AuditTarget,
    Checkpoint,
    DistinctPair,
    Drawer,
    DrawerLink,
    Entity,
    EntityAlias,
    EntityLink,
    Mention,
    Room,
    Wing,
)

logger = logging.getLogger("castellan.dedup")

MAX_LINKS_PER_WRITE = 5


class WriteMode(enum.Enum):
    """Who is writing decides whether an exact copy is refused and whose drawers are compared.

    memory: an exact copy is not stored; every agent's drawers in the room are compared.
    diary:  an exact copy of the same agent's entry is not stored; only that agent's entries.
    mined:  everything is stored (two identical files are two records) and linked.
    Named writes are always stored and linked (the name is the drawer's identity).
    """

    MEMORY = "memory"
    DIARY = "diary"
    MINED = "mined"

    @property
    def skips_exact_copy(self) -> bool:
        return self is not WriteMode.MINED

    @property
    def per_agent(self) -> bool:
        return self is WriteMode.DIARY


@dataclass(frozen=True)
class DrawerWrite:
    """The outcome of a write: the drawer holding the memory, whether it was stored now, and the
    links recorded to what it resembles (strongest first)."""

    drawer: Drawer
    created: bool
    links: tuple[DrawerLink, ...] = ()
    duplicate_of: Drawer | None = None


@dataclass(frozen=True)
class DedupConfig:
    enabled: bool
    near_threshold: float
    entity_fuzzy: bool

    @classmethod
    def from_settings(cls) -> DedupConfig:
        return cls(
            enabled=settings.CASTELLAN_DEDUP_ENABLED,
            near_threshold=settings.CASTELLAN_DEDUP_NEAR_THRESHOLD,
            entity_fuzzy=settings.CASTELLAN_DEDUP_ENTITY_FUZZY,
        )


# --- Wings and rooms ---------------------------------------------------------------------------


def room_get_or_create(*, wing: str, room: str) -> Room:
    """Wings and rooms are created on first use."""
    wing_name = clean_label(wing, "wing")
    room_name = clean_label(room, "room")
    with transaction.atomic():
        wing_obj, _ = Wing.objects.get_or_create(name=wing_name)
        room_obj, _ = Room.objects.get_or_create(wing=wing_obj, name=room_name)
    return room_obj


# --- Drawers -----------------------------------------------------------------------------------


def drawer_write(
    *,
    room: Room,
    content: str,
    mode: WriteMode = WriteMode.MEMORY,
    name: str | None = None,
    kind: str = "",
    agent: str = "",
    source: dict | None = None,
    drawer_id: uuid_module.UUID | None = None,
    config: DedupConfig | None = None,
) -> DrawerWrite:
    """Write one memory into a room, deduplicating conservatively.

    An exact copy (same bytes) among the scope's current drawers is not stored: the oldest copy
    comes back with created=False. A named write is always stored, unless the room already holds
    that name with the same content (a no-op) or other content (DrawerNameTaken). Anything stored
    is linked to at most MAX_LINKS_PER_WRITE drawers it resembles, newer to older.

    `drawer_id` makes the write replayable: writing the same id again stores nothing new and
    links nothing.
    """
    content = clean_content(content)
    name = clean_optional_label(name, "name", max_length=200) or None
    kind = clean_kind(kind)
    agent = clean_optional_label(agent, "agent", max_length=150)
    if source is not None and not isinstance(source, dict):
        raise InvalidInput("source must be a JSON object.", details={"field": "source"})
    if mode.per_agent and not agent:
        raise InvalidInput("a diary entry needs an agent.", details={"field": "agent"})
    config = config or DedupConfig.from_settings()
    text = policy.Text.of(content)

    with transaction.atomic():
        # Writers of the same text (or the same name) in a room queue on a lock, so a race
        # stores one. The text's lock is taken by the candidate query itself (one round trip),
        # unless something must be checked under it first: replays of one id carry one text, so
        # they queue on it before checking the id.
        if name is not None:
            advisory_lock("drawer-name", room.id, name)
        text_lock: int | None = lock_key("drawer", room.id, text.content_hash)
        if drawer_id is not None or not config.enabled:
            hold_lock(text_lock)
            text_lock = None
        if drawer_id is not None:
            replayed = _replayed(drawer_id, room)
            if replayed is not None:
                return DrawerWrite(replayed, created=False)

        if name is not None:
            named = Drawer.objects.current().filter(room=room, name=name).first()
            if named is not None:
                if named.content == content:
                    return DrawerWrite(named, created=False)
                raise DrawerNameTaken(
                    f"The room already holds a drawer named {name!r} with other content.",
                    details={"drawer": str(named.uuid), "name": name},
                )

        scope = candidates.Scope(room=room, agent=agent if mode.per_agent else None)
        skip_exact = mode.skips_exact_copy and name is None
        found = (
            candidates_for_text(scope, text, threshold=config.near_threshold, lock=text_lock)
            if config.enabled
            else candidates.Found([], [])
        )
        exact = [c for c in found.same if c.content_hash == text.content_hash]
        if skip_exact and exact:
            logger.debug("exact copy of drawer %s in room %s", exact[0].uuid, room)
            existing = Drawer.objects.get(pk=exact[0].id)
            return DrawerWrite(existing, created=False, duplicate_of=existing)

        assessed = _assess_candidates(text, found, config) if config.enabled else []
        drawer = Drawer(
            uuid=drawer_id or uuid_module.uuid4(),
            room=room,
            content=content,
            content_hash=text.content_hash,
            normalized_content=text.normalized,
            fingerprint=text.fingerprint,
            name=name,
            kind=kind,
            agent=agent,
            source=source or {},
        )
        links = [
            DrawerLink(
                newer=drawer,
                older_id=older.id,
                verdict=assessment.verdict,
                similarity=assessment.signals.similarity,
                signals=assessment.signals.as_dict(),
            )
            for older, assessment in assessed
        ]
        _drawer_insert(drawer, links)
    if links and logger.isEnabledFor(logging.INFO):  # the list is worth building only then
        logger.info(
            "drawer %s stored in %s, similar_to %s",
            drawer.uuid,
            room,
            ", ".join(f"{older.uuid} ({assessment.verdict})" for older, assessment in assessed),
        )
    return DrawerWrite(drawer, created=True, links=tuple(links))


_LINK_FIELDS = ("older", "verdict", "similarity", "signals", "status", "created_at")


def _drawer_insert(drawer: Drawer, links: list[DrawerLink]) -> None:
    """Insert a new drawer and its links, and mark them saved.

    What `save()` and `bulk_create()` do, without their cost on the hot path of every write: the
    ORM's preparation took longer than the inserts themselves. Values are still prepared by each
    model field, so they are stored exactly as the ORM would store them. A link names its newer
    drawer by uuid, known before the insert, so on PostgreSQL both statements go in one round
    trip.
    """
    drawer_fields = [f for f in Drawer._meta.local_concrete_fields if not f.primary_key]
    statements = [_insert_sql(Drawer, [f.column for f in drawer_fields], 1, "id")]
    params = [f.get_db_prep_save(f.pre_save(drawer, True), connection) for f in drawer_fields]
    if links:
        link_fields = [DrawerLink._meta.get_field(name) for name in _LINK_FIELDS]
        newer = f"(SELECT id FROM {Drawer._meta.db_table} WHERE uuid = %s)"
        statements.append(
            _insert_sql(
                DrawerLink,
                ["newer_id", *(f.column for f in link_fields)],
                len(links),
                "id, older_id",
                first_value=newer,
            )
        )
        drawer_uuid = Drawer._meta.get_field("uuid").get_db_prep_save(drawer.uuid, connection)
        link_params = [
            value
            for link in links
            for value in (
                drawer_uuid,
                *(f.get_db_prep_save(getattr(link, f.attname), connection) for f in link_fields),
            )
        ]
    with connection.cursor() as cursor:
        if links and connection.vendor == "postgresql":
            cursor.execute("; ".join(statements), [*params, *link_params])
            drawer.pk = cursor.fetchone()[0]
            cursor.nextset()
        else:
            cursor.execute(statements[0], params)
            drawer.pk = cursor.fetchone()[0]
            if links:
                cursor.execute(statements[1], link_params)
        link_ids = {older_id: link_id for link_id, older_id in cursor.fetchall()} if links else {}
    _mark_saved(drawer)
    for link in links:  # one link per older drawer; RETURNING promises no order
        link.pk = link_ids[link.older_id]
        link.newer_id = drawer.pk
        _mark_saved(link)


def _insert_sql(
    model, columns: list[str], rows: int, returning: str, *, first_value: str = "%s"
) -> str:
    row = f"({', '.join([first_value, *['%s'] * (len(columns) - 1)])})"
    return (
        f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) "
        f"VALUES {', '.join([row] * rows)} RETURNING {returning}"
    )


def _mark_saved(instance) -> None:
    instance._state.adding = False
    instance._state.db = connection.alias


def drawer_write_in(*, wing: str, room: str, **write) -> DrawerWrite:
    """`drawer_write` into a wing and room named by the caller, created on first use; a write
    that is refused leaves no new wing or room behind."""
    with transaction.atomic():
        return drawer_write(room=room_get_or_create(wing=wing, room=room), **write)


def _replayed(drawer_id: uuid_module.UUID, room: Room) -> Drawer | None:
    existing = Drawer.objects.filter(uuid=drawer_id).first()
    if existing is None:
        return None
    if existing.room_id != room.id:
        raise Conflict(
            "That drawer id is already used in another room.",
            code="drawer_id_taken",
            details={"drawer": str(drawer_id)},
        )
    return existing


def candidates_for_text(
    scope: candidates.Scope,
    text: policy.Text,
    *,
    threshold: float,
    lock: int | None = None,
    groups: int = candidates.LEXICAL_GROUPS,
) -> candidates.Found:
    """Every candidate of a text in its scope, in one round trip (the write path's and the
    sweeps'), read once `lock` is held. A short text can only be exact or normalized, so it gets
    no lexical query; the lexical query, there to find near texts, asks only for lengths that
    can be near at `threshold`, with `groups` pairs of the text's words."""
    if len(text.normalized) < policy.MIN_NEAR_CHARS:
        return candidates.for_text(scope, text.content_hash, text.fingerprint, [], lock=lock)
    low, high = policy.near_length_range(len(text.normalized), threshold)
    lengths = candidates.LengthBand(
        low, candidates.ANY_LENGTH.high if high is None else high, policy.EDIT_DISTANCE_LIMIT
    )
    return candidates.for_text(
        scope,
        text.content_hash,
        text.fingerprint,
        policy.query_words_of_normalized(text.normalized),
        lock=lock,
        lengths=lengths,
        groups=groups,
    )


def _assess_candidates(
    text: policy.Text, found: candidates.Found, config: DedupConfig
) -> list[tuple[candidates.Candidate, policy.Assessment]]:
    """Judge the bounded set of candidates and keep the strongest verdicts, strongest first."""
    pool: dict[int, candidates.Candidate] = {c.id: c for c in found.same}
    for candidate in found.lexical:
        pool.setdefault(candidate.id, candidate)

    assessed = []
    for candidate in pool.values():
        old = policy.Text(
            candidate.content_hash, candidate.normalized_content, candidate.fingerprint
        )
        if not policy.may_have_verdict(text, old, threshold=config.near_threshold):
            continue
        assessment = policy.assess(text, old, threshold=config.near_threshold)
        if assessment.verdict is not None:
            assessed.append((candidate, assessment))
    assessed.sort(
        key=lambda pair: (-pair[1].verdict.strength, -pair[1].signals.similarity, pair[0].id)
    )
    return assessed[:MAX_LINKS_PER_WRITE]


def drawer_link(
    *, newer: Drawer, older: Drawer, verdict: str, signals: dict
) -> tuple[DrawerLink, bool]:
    """Record a similar_to link from a newer drawer to an older one. Idempotent: the same pair
    linked again keeps its one link, and a pair is never linked in reverse."""
    if newer.pk == older.pk:
        raise InvalidInput("A drawer is never linked to itself.")
    if newer.pk < older.pk:
        newer, older = older, newer
    with transaction.atomic():
        low, high = DistinctPair.ordered(older.pk, newer.pk)
        if DistinctPair.objects.filter(kind=DistinctPair.Kind.DRAWER, low=low, high=high).exists():
            raise Conflict(
                "A curator said these drawers are not the same; they are not linked again.",
                code="remembered_distinct",
            )
        return DrawerLink.objects.get_or_create(
            newer=newer,
            older=older,
            defaults={
                "verdict": verdict,
                "similarity": float(signals.get("similarity", 0.0)),
                "signals": signals,
            },
        )


def drawer_snapshot(drawer: Drawer) -> dict:
    return {
        "id": str(drawer.uuid),
        "room": str(drawer.room),
        "content": drawer.content,
        "content_hash": drawer.content_hash,
        "name": drawer.name,
        "kind": drawer.kind,
        "agent": drawer.agent,
        "source": drawer.source,
        "valid_from": drawer.valid_from.isoformat(),
        "valid_to": drawer.valid_to.isoformat() if drawer.valid_to else None,
        "superseded_by": str(drawer.superseded_by.uuid) if drawer.superseded_by_id else None,
        "created_at": drawer.created_at.isoformat(),
    }


def drawer_supersede(*, drawer: Drawer, by: Drawer | None = None, actor=None) -> Drawer:
    """End a drawer's validity, optionally naming the drawer that replaces it. A superseded
    drawer is never a duplicate candidate again, so saying the same thing later is stored."""
    with transaction.atomic():
        drawer = Drawer.objects.select_for_update(of=("self",)).get(pk=drawer.pk)
        if drawer.valid_to is not None:
            raise Conflict("The drawer is already superseded.", code="drawer_not_current")
        if by is not None:
            if by.pk == drawer.pk:
                raise InvalidInput("A drawer cannot supersede itself.", details={"field": "by"})
            if by.valid_to is not None:
                raise Conflict(
                    "The replacing drawer is itself superseded.", code="drawer_not_current"
                )
        before = drawer_snapshot(drawer)
        drawer.valid_to = timezone.now()
        drawer.superseded_by = by
        drawer.save(update_fields=["valid_to", "superseded_by"])
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.DRAWER_SUPERSEDE,
            target_type=AuditTarget.DRAWER,
            target_id=drawer.uuid,
            before={"valid_to": before["valid_to"], "superseded_by": before["superseded_by"]},
            after={
                "valid_to": drawer.valid_to.isoformat(),
                "superseded_by": str(by.uuid) if by else None,
            },
        )
    return drawer


def drawer_delete(*, drawer: Drawer, actor=None) -> None:
    """Delete a drawer and, with it, its links and mentions. The audit row keeps what it held."""
    with transaction.atomic():
        drawer = Drawer.objects.select_related("room__wing", "superseded_by").get(pk=drawer.pk)
        links = list(
            DrawerLink.objects.filter(newer=drawer).values("older__uuid", "verdict", "similarity")
        ) + list(
            DrawerLink.objects.filter(older=drawer).values("newer__uuid", "verdict", "similarity")
        )
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.DRAWER_DELETE,
            target_type=AuditTarget.DRAWER,
            target_id=drawer.uuid,
            before={**drawer_snapshot(drawer), "links": _jsonable(links)},
            after=None,
        )
        drawer.delete()


def _jsonable(rows: Iterable[dict]) -> list[dict]:
    return [
        {
            key: str(value) if isinstance(value, uuid_module.UUID) else value
            for key, value in row.items()
        }
        for row in rows
    ]


# --- Entities ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class EntityResolution:
    entity: Entity
    created: bool
    rule: policy.Rule
    confidence: float
    possible: tuple[EntityLink, ...] = field(default=())


def _candidate(entity: Entity, aliases: Iterable[str] = ()) -> policy.EntityCandidate:
    return policy.EntityCandidate(
        id=entity.id,
        name=entity.name,
        kind=entity.kind,
        aliases=tuple(aliases),
        age=entity.id,
        key=entity.key,
    )


def entity_resolve(
    *, name: str, kind: str = "other", config: DedupConfig | None = None
) -> EntityResolution:
    """Resolve a sighted name to a known entity on safe evidence, or create a new one.

    A converged spelling joins the entity's aliases; a new entity that merely resembles others is
    linked to each with possibly_same_as. Nothing is merged and no name is rewritten.
    """
    name = clean_label(name, "name", max_length=200)
    kind = clean_kind(kind, default=policy.VAGUE_KIND)
    config = config or DedupConfig.from_settings()
    key = policy.entity_key(name)
    for attempt in range(2):
        try:
            with transaction.atomic():
                advisory_lock("entity", key)
                return _entity_resolve_locked(name, kind, key, config)
        except IntegrityError:
            # Another writer created the same (name, kind) between our read and our insert: the
            # second attempt sees it and converges on it.
            if attempt:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def canonical_entity(entity: Entity) -> Entity:
    """Follow the redirects a curator made (alias or merge) to the entity that now answers."""
    seen = {entity.pk}
    while entity.redirect_to_id is not None:
        entity = Entity.objects.get(pk=entity.redirect_to_id)
        if entity.pk in seen:  # pragma: no cover - decisions never make a cycle
            raise RuntimeError(f"redirect cycle at entity {entity.pk}")
        seen.add(entity.pk)
    return entity


def _entity_resolve_locked(name: str, kind: str, key: str, config: DedupConfig) -> EntityResolution:
    matching = list(candidates.entities_matching(kind=kind, name=name, key=key))
    if matching:
        known = [_candidate(e, (a.alias for a in e.alias_set.all())) for e in matching]
        by_id = {e.id: e for e in matching}
    elif config.entity_fuzzy:
        band = list(candidates.entities_in_key_band(kind=kind, key_length=len(key)))
        known = [_candidate(e) for e in band]
        by_id = {e.id: e for e in band}
    else:
        known, by_id = [], {}
    resolution = policy.resolve(name, kind, known, config.entity_fuzzy)

    if resolution.entity is not None:
        entity = canonical_entity(by_id[resolution.entity])
        if name != entity.name:
            EntityAlias.objects.get_or_create(entity=entity, alias=name, defaults={"key": key})
        return EntityResolution(entity, False, resolution.rule, resolution.confidence)

    entity = Entity.objects.create(name=name, kind=kind, key=key, key_length=len(key))
    links = EntityLink.objects.bulk_create(
        EntityLink(
            newer=entity,
            older=by_id[match.entity],
            similarity=match.similarity,
            distance=match.distance,
        )
        for match in resolution.possible
    )
    if links:
        logger.info(
            "entity %r (%s) is new; possibly_same_as %s",
            name,
            kind,
            ", ".join(repr(link.older.name) for link in links),
        )
    return EntityResolution(entity, True, resolution.rule, 1.0, tuple(links))


@dataclass(frozen=True)
class MentionWrite:
    mention: Mention
    created: bool
    resolution: EntityResolution


def mention_add(
    *,
    drawer: Drawer,
    name: str,
    kind: str = "other",
    provenance: dict | None = None,
    config: DedupConfig | None = None,
) -> MentionWrite:
    """Record that a drawer names an entity, resolving the name first."""
    if provenance is not None and not isinstance(provenance, dict):
        raise InvalidInput("provenance must be a JSON object.", details={"field": "provenance"})
    with transaction.atomic():
        resolution = entity_resolve(name=name, kind=kind, config=config)
        mention, created = Mention.objects.get_or_create(
            drawer=drawer,
            entity=resolution.entity,
            defaults={
                "observation": {
                    "name": name.strip(),
                    "rule": str(resolution.rule),
                    "confidence": resolution.confidence,
                },
                "provenance": provenance or {},
            },
        )
    return MentionWrite(mention, created, resolution)


def entity_alias_add(*, entity: Entity, alias: str, actor=None) -> tuple[Entity, bool]:
    """Record another spelling of an entity by hand, so later sightings converge on it.

    The alias is trimmed; one equal to the name or already recorded changes nothing.
    """
    alias = clean_label(alias, "alias", max_length=200)
    with transaction.atomic():
        entity = Entity.objects.select_for_update().get(pk=entity.pk)
        if alias == entity.name or entity.alias_set.filter(alias=alias).exists():
            return entity, False
        before = list(entity.alias_set.values_list("alias", flat=True))
        EntityAlias.objects.create(entity=entity, alias=alias, key=policy.entity_key(alias))
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.ENTITY_ALIAS_ADD,
            target_type=AuditTarget.ENTITY,
            target_id=entity.uuid,
            before={"aliases": before},
            after={"aliases": [*before, alias]},
            data={"alias": alias},
        )
    return entity, True


# --- Checkpoints -------------------------------------------------------------------------------

CHECKPOINT_NAMESPACE = uuid_module.UUID("6f1d6f2e-3c43-4c1e-9f55-2b1de0a4c0a1")


class Destination(enum.StrEnum):
    GENERAL = "general"
    PREFERENCE = "preference"
    PROJECT = "project"
    DIARY = "diary"

    @property
    def default_wing(self) -> str:
        return {
            Destination.GENERAL: "general",
            Destination.PREFERENCE: "preferences",
            Destination.PROJECT: "projects",
            Destination.DIARY: "diary",
        }[self]

    @property
    def room(self) -> str:
        return "diary" if self is Destination.DIARY else "entries"


@dataclass(frozen=True)
class CheckpointItem:
    content: str
    destination: Destination
    agent: str
    wing: str | None = None
    name: str | None = None
    kind: str = ""
    source: dict | None = None


def checkpoint_payload_hash(items: Iterable[CheckpointItem]) -> str:
    canonical = json.dumps(
        [[i.content, str(i.destination), i.agent, i.wing, i.name, i.kind, i.source] for i in items],
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def checkpoint_write(*, key: str, items: list[CheckpointItem], actor=None) -> tuple[dict, bool]:
    """Write a batch under a client-chosen id, in order, in one transaction: later items see
    earlier ones, an exact copy is not stored and is counted in `duplicates`, and a failing item
    fails the whole batch. Replaying the id returns the first result and stores nothing.

    Returns (result, replayed).
    """
    key = clean_label(key, "id", max_length=200)
    payload_hash = checkpoint_payload_hash(items)
    with transaction.atomic():
        advisory_lock("checkpoint", key)
        existing = Checkpoint.objects.filter(key=key).first()
        if existing is not None:
            if existing.payload_hash != payload_hash:
                raise Conflict(
                    "That checkpoint id was already used with other items.",
                    code="checkpoint_id_taken",
                    details={"id": key},
                )
            return existing.result, True

        outcomes = []
        for index, item in enumerate(items):
            room = room_get_or_create(
                wing=item.wing or item.destination.default_wing, room=item.destination.room
            )
            written = drawer_write(
                room=room,
                content=item.content,
                mode=WriteMode.DIARY if item.destination is Destination.DIARY else WriteMode.MEMORY,
                name=item.name,
                kind=item.kind,
                agent=item.agent,
                source={"checkpoint": key, "item": index, **(item.source or {})},
                drawer_id=uuid_module.uuid5(CHECKPOINT_NAMESPACE, f"{key}\x1f{index}"),
            )
            outcomes.append(
                {
                    "index": index,
                    "drawer": str(written.drawer.uuid),
                    "wing": room.wing.name,
                    "room": room.name,
                    "created": written.created,
                    "similar": len(written.links),
                }
            )
        result = {
            "id": key,
            "items": len(items),
            "stored": sum(o["created"] for o in outcomes),
            "duplicates": sum(not o["created"] for o in outcomes),
            "similar": sum(o["similar"] > 0 for o in outcomes),
            "drawers": outcomes,
        }
        Checkpoint.objects.create(
            key=key,
            payload_hash=payload_hash,
            result=result,
            created_by=actor if getattr(actor, "is_authenticated", False) else None,
        )
    return result, False
