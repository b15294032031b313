"""The write path every memory takes, by the API, the admin and the commands alike, phase by
phase: check the input; take the locks; return what a replay or a named write already stored;
find and judge the candidates; return an exact copy, or build and insert the drawer and its links;
log.

`drawer_write` owns one transaction: the candidate queries, the verdicts, the drawer and its links
commit together or not at all. It is the hot path: each phase does only what the write needs, and
the whole write takes as few round trips as it can.
"""

from __future__ import annotations

import logging
import uuid as uuid_module
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from django.db import IntegrityError, transaction

from dedup import candidates, metrics, policy
from dedup.errors import DomainError, InvalidInput
from dedup.locks import drawer_held, drawer_hold, hold_lock, hold_locks, lock_key, room_writes
from dedup.services.config import DedupConfig, WriteMode
from dedup.services.earlier_writes import earlier_drawer, id_replayed
from dedup.services.inserts import drawer_insert
from dedup.services.rooms import room_get_or_create
from dedup.services.similarity import Assessed, assess_candidates, candidates_for_text
from dedup.validation import (
    AGENT_MAX_LENGTH,
    NAME_MAX_LENGTH,
    clean_content,
    clean_kind,
    clean_metadata,
    clean_optional_label,
    optional_written_name,
    place_name,
)
from palace.models import (
    Drawer,
    DrawerLink,
    DrawerRestatement,
    Room,
    Wing,
)

logger = logging.getLogger("castellan.dedup")


@dataclass(frozen=True)
class DrawerWrite:
    """The outcome of a write: the drawer holding the memory, whether it was stored now, and the
    links recorded to what it resembles (strongest first)."""

    drawer: Drawer
    created: bool
    links: tuple[DrawerLink, ...] = ()
    duplicate_of: Drawer | None = None


@dataclass(frozen=True, slots=True)
class _CheckedWrite:
    """A write's input once checked: what every phase of `drawer_write` reads."""

    room: Room
    content: str
    text: policy.Text
    mode: WriteMode
    name: str | None
    name_as_given: str | None  # a drawer stored under it before is found by it too
    kind: str
    agent: str
    source: dict[str, Any] | None
    drawer_id: uuid_module.UUID | None
    config: DedupConfig


def drawer_write(
    *,
    room: Room,
    content: str,
    mode: WriteMode = WriteMode.MEMORY,
    name: str | None = None,
    kind: str = "",
    agent: str = "",
    source: dict[str, Any] | None = None,
    drawer_id: uuid_module.UUID | None = None,
    config: DedupConfig | None = None,
    restates: bool = True,
) -> DrawerWrite:
    """Write one memory into a room, deduplicating conservatively.

    An exact copy (same bytes) among the scope's current drawers is not stored: the oldest copy
    comes back with created=False. A named write is always stored, unless the room already holds
    that name with the same content (a no-op) or other content (DrawerNameTaken). Anything stored
    is linked to at most MAX_LINKS_PER_WRITE drawers it resembles, newer to older.

    `drawer_id` makes the write replayable: writing the same id again stores nothing new and
    links nothing. A write answered with another's drawer (an exact copy, the same named drawer)
    records a `DrawerRestatement` of it, which an import's reversal keeps; an import passes
    `restates=False` and records what it found itself (`Import.found`).
    """
    write = _checked(
        room=room,
        content=content,
        mode=mode,
        name=name,
        kind=kind,
        agent=agent,
        source=source,
        drawer_id=drawer_id,
        config=config,
    )
    with transaction.atomic():
        room_lock = _take_locks(write)
        earlier = _earlier(write)
        if earlier is not None and earlier.uuid != write.drawer_id and restates:
            earlier = _restated(earlier)  # None: deleted meanwhile, so this write stores it
        if earlier is not None:
            metrics.drawer_written("replay")
            return DrawerWrite(earlier, created=False)
        found = _candidates(write, room_lock)
        exact_copy = _exact_copy(write, found)
        if exact_copy is not None:
            metrics.drawer_written(policy.Verdict.EXACT)
            if restates:
                _restated(exact_copy.drawer, held=True)  # by `_exact_copy`
            return exact_copy
        assessed = (
            assess_candidates(write.text, found, write.config) if write.config.enabled else []
        )
        drawer = _new_drawer(write)
        links = drawer_insert(drawer, _links_to_older(drawer, assessed))
        metrics.drawer_written(links[0].verdict if links else "new")
    _log_stored(drawer, write.room, assessed)
    return DrawerWrite(drawer, created=True, links=tuple(links))


@dataclass(frozen=True)
class DrawerCheck:
    """What `drawer_write` would do with an input, found without writing anything: return an
    existing drawer instead (an exact copy, a replayed id, the same named drawer), or store a new
    one linked to the drawers in `similar` (strongest first; empty: no link)."""

    existing: Drawer | None
    similar: Assessed = field(default_factory=list)

    @property
    def would_store(self) -> bool:
        return self.existing is None


def drawer_check(
    *,
    wing: str,
    room: str,
    content: str,
    mode: WriteMode = WriteMode.MEMORY,
    name: str | None = None,
    kind: str = "",
    agent: str = "",
    source: dict[str, Any] | None = None,
    drawer_id: uuid_module.UUID | None = None,
    config: DedupConfig | None = None,
) -> DrawerCheck:
    """A dry run of `drawer_write_in`: the same checks, the same errors (a name taken, an id
    used in another room) and the same verdicts, through the same phases, but no lock is taken
    and nothing is written, not even the wing or the room. A race can still change the answer
    before a real write."""
    wing_name, room_name = place_name(wing, "wing"), place_name(room, "room")
    known_room = Room.objects.filter(wing__name=wing_name, name=room_name).first()
    return drawer_check_at(
        room=known_room or Room(wing=Wing(name=wing_name), name=room_name),
        content=content,
        mode=mode,
        name=name,
        kind=kind,
        agent=agent,
        source=source,
        drawer_id=drawer_id,
        config=config,
    )


def drawer_check_at(*, room: Room, **check: Any) -> DrawerCheck:
    """`drawer_check` in a room looked up already (a dry run of many records looks up their
    rooms together): a saved one, or one not made yet (unsaved, its wing and name those the
    write would create)."""
    write = _checked(room=room, **check)
    if room.pk is None:  # a room's first write: nothing to compare with
        drawer_id = write.drawer_id
        replayed = id_replayed(drawer_id, room) if drawer_id is not None else None
        return DrawerCheck(existing=replayed)
    earlier = _earlier(write)
    if earlier is not None:
        return DrawerCheck(existing=earlier)
    found = _candidates(write, room_lock=None)
    exact_copy = _exact_copy(write, found)
    if exact_copy is not None:
        return DrawerCheck(existing=exact_copy.drawer)
    if not write.config.enabled:
        return DrawerCheck(existing=None)
    return DrawerCheck(existing=None, similar=assess_candidates(write.text, found, write.config))


def drawer_write_in(*, wing: str, room: str, as_named: bool = False, **write: Any) -> DrawerWrite:
    """`drawer_write` into a wing and room named by the caller, created on first use (`as_named`:
    `rooms_get_or_create`); a write that is refused leaves no new wing or room behind.

    The room is found before its write lock is taken, so an empty room deleted in between (by
    an admin, or an import's reversal removing the places it made) fails the drawer's foreign
    key when the transaction commits. A write that owns its transaction is then made again,
    once, into the room made again, as if it had come after the deletion (counted once: the
    first try's count, `metrics`, waits for a commit that never comes, and its rollback drops
    it); inside a caller's transaction the error is the caller's."""
    owns_transaction = not transaction.get_connection().in_atomic_block
    found: list[Room] = []
    try:
        return _write_in(wing, room, as_named, write, found)
    except IntegrityError:
        if not owns_transaction or not found or Room.objects.filter(pk=found[0].pk).exists():
            raise
    return _write_in(wing, room, as_named, write, [])


def _write_in(
    wing: str, room: str, as_named: bool, write: dict[str, Any], found: list[Room]
) -> DrawerWrite:
    with transaction.atomic():
        place = room_get_or_create(wing=wing, room=room, as_named=as_named)
        found.append(place)
        return drawer_write(room=place, **write)


def _checked(
    *,
    room: Room,
    content: str,
    mode: WriteMode = WriteMode.MEMORY,
    name: str | None = None,
    kind: str = "",
    agent: str = "",
    source: dict[str, Any] | None = None,
    drawer_id: uuid_module.UUID | None = None,
    config: DedupConfig | None = None,
) -> _CheckedWrite:
    """Refuse bad input before anything is read or written."""
    content = clean_content(content)
    name_as_given = clean_optional_label(name, "name", max_length=NAME_MAX_LENGTH) or None
    name = optional_written_name(name, "name", max_length=NAME_MAX_LENGTH) or None
    kind = clean_kind(kind)
    agent = optional_written_name(agent, "agent", max_length=AGENT_MAX_LENGTH)
    source = clean_metadata(source, "source")
    if mode.per_agent and not agent:
        raise InvalidInput("a diary entry needs an agent.", details={"field": "agent"})
    return _CheckedWrite(
        room=room,
        content=content,
        text=policy.Text.of(content),
        mode=mode,
        name=name,
        name_as_given=name_as_given,
        kind=kind,
        agent=agent,
        source=source,
        drawer_id=drawer_id,
        config=config or DedupConfig.from_settings(),
    )


def hold_write_locks(writes: Iterable[tuple[Room, str, str | None]]) -> None:
    """Take up front, in the canonical order (names, then rooms' writes, each sorted), the locks
    that writes of these (room, content, name) will take one by one: a batch of writes into the
    same rooms as another in opposite order then queues on it instead of deadlocking. A write
    that will be refused for its input takes no lock."""
    names, rooms = set(), set()
    for room, content, name in writes:
        try:
            name = optional_written_name(name, "name", max_length=NAME_MAX_LENGTH)
            clean_content(content)
        except DomainError:
            continue
        if name:
            names.add(_name_lock(room, name))
        rooms.add(room_writes(room.id))
    hold_locks(names)
    hold_locks(rooms)


def _name_lock(room: Room, name: str) -> int:
    return lock_key("drawer-name", room.id, name)


def _take_locks(write: _CheckedWrite) -> int | None:
    """Writers into a room queue on its lock (and writers of the same name on the name's), so a
    race stores one copy and links near variants (`room_writes`). The room's lock is taken by the
    candidate query itself (one round trip), so it is returned for that query to take, unless
    something must be checked under it first: replays of one id queue on it before checking the
    id (and None is returned)."""
    if write.name is not None:
        hold_lock(_name_lock(write.room, write.name))
    room_lock = room_writes(write.room.id)
    if write.drawer_id is not None or not write.config.enabled:
        hold_lock(room_lock)
        return None
    return room_lock


def _earlier(write: _CheckedWrite) -> Drawer | None:
    return earlier_drawer(
        room=write.room,
        content=write.content,
        name=write.name,
        name_as_given=write.name_as_given,
        drawer_id=write.drawer_id,
    )


def _candidates(write: _CheckedWrite, room_lock: int | None) -> candidates.Found:
    if not write.config.enabled:
        return candidates.Found([], [])
    # A diary's entries are compared with the same agent's, however they are written (a memory
    # written into the room `diary` too: sweeps and merges take the room so).
    per_agent = write.mode.per_agent or write.room.is_diary
    scope = candidates.Scope(room=write.room, agent=write.agent if per_agent else None)
    return candidates_for_text(
        scope, write.text, threshold=write.config.near_threshold, lock=room_lock
    )


def _exact_copy(write: _CheckedWrite, found: candidates.Found) -> DrawerWrite | None:
    """The oldest exact copy among the candidates, when this write does not store one. It is
    held until commit; a copy deleted or superseded since the candidates were read is passed
    over (and, if none is left, the write stores the text: the memory is kept). The hold reads
    the row as last committed: a supersession committed since is seen; one still under way (it
    holds the drawer FOR NO KEY UPDATE, which the hold does not wait for) comes after this
    write, as if the two had been made one after the other."""
    if not write.mode.skips_exact_copy or write.name is not None:
        return None
    for exact in found.same:
        if exact.content_hash != write.text.content_hash:
            continue
        existing = drawer_held(exact.id)
        if existing is not None and existing.valid_to is None:
            logger.debug("exact copy of drawer %s in room %s", exact.uuid, write.room)
            return DrawerWrite(existing, created=False, duplicate_of=existing)
    return None


def _restated(drawer: Drawer, *, held: bool = False) -> Drawer | None:
    """Record that a later write stated the drawer again, the first time only (a row there
    already is left as it is), holding the drawer first (FOR KEY SHARE, unless `held` already)
    as a row that refers to it must: None if it was deleted meanwhile (its deletion committed
    while this waited)."""
    if not held and not drawer_hold(drawer.pk):
        return None
    DrawerRestatement.objects.bulk_create(
        [DrawerRestatement(drawer_id=drawer.pk)], ignore_conflicts=True
    )
    return drawer


def _new_drawer(write: _CheckedWrite) -> Drawer:
    return Drawer(
        uuid=write.drawer_id or uuid_module.uuid4(),
        room=write.room,
        content=write.content,
        content_hash=write.text.content_hash,
        normalized_content=write.text.normalized,
        index_text=policy.index_text(write.text.normalized),
        fingerprint=write.text.fingerprint,
        name=write.name,
        kind=write.kind,
        agent=write.agent,
        source=write.source or {},
    )


def _links_to_older(drawer: Drawer, assessed: Assessed) -> list[DrawerLink]:
    return [
        DrawerLink(
            newer=drawer,
            older_id=older.id,
            verdict=cast(policy.Verdict, assessment.verdict),  # assessed pairs have one
            similarity=assessment.signals.similarity,
            signals=assessment.signals.as_dict(),
        )
        for older, assessment in assessed
    ]


def _log_stored(drawer: Drawer, room: Room, assessed: Assessed) -> None:
    if assessed and logger.isEnabledFor(logging.INFO):  # the list is worth building only then
        logger.info(
            "drawer %s stored in %s, similar_to %s",
            drawer.uuid,
            room,
            ", ".join(f"{older.uuid} ({assessment.verdict})" for older, assessment in assessed),
        )
