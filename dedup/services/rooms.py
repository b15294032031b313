"""Wings and rooms: created on first use, by whichever write names them; renamed, moved and
deleted (by a curator in the admin, an empty one by an import's reversal) through `wing_rename`,
`room_change`, `rooms_move`, `room_delete` and `wing_delete`, each audited."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

from django.db import transaction
from django.db.models import Q

from dedup.errors import Conflict, NotFound
from dedup.locks import hold_lock, hold_locks, lock_key, lock_taken, room_writes
from dedup.services.config import Actor
from dedup.validation import clean_place_name, lookup_form, place_name, unscopable
from palace.models import AuditAction, AuditEntry, AuditTarget, Drawer, Room, Wing

# A place as a caller names it: (wing, room).
Place = tuple[str, str]


def room_get_or_create(*, wing: str, room: str, as_named: bool = False) -> Room:
    """Wings and rooms are created on first use."""
    return rooms_get_or_create([(wing, room)], as_named=as_named)[(wing, room)]


def rooms_get_or_create(places: Iterable[Place], *, as_named: bool = False) -> dict[Place, Room]:
    """The rooms of several places, by the (wing, room) names given, created on first use.

    Creating a wing or a room waits on anyone creating the same one, so the places missing are
    locked first, all of them, in the canonical order (wings, then rooms, each sorted): two
    requests creating the same new wings in opposite order then queue instead of deadlocking.

    Names are found in the form a client's every name is (`place_name`: composed, so a file or
    a request naming "cafe\u0301" writes into the wing "café"). A new wing or room is given
    that name checked by `clean_place_name`, `restored` when `as_named` (an import restoring a
    store's names): a '/' a path cannot name is kept (a backup of a room holding one restores
    whole), but a blank name, or a wing no key can be made for, is refused as any new one.
    """
    given = functools.partial(clean_place_name, restored=as_named)
    cleaned = {
        place: (place_name(place[0], "wing"), place_name(place[1], "room")) for place in places
    }
    wanted = set(cleaned.values())
    with transaction.atomic():
        found = _rooms_named(wanted)
        missing = sorted(wanted - found.keys())
        if missing:
            # Locked by the names they will be given: "café" and its decomposed twin, both new,
            # make one wing.
            hold_locks(lock_key("wing", wing) for wing, _ in missing)
            hold_locks(lock_key("room", w, r) for w, r in missing)
            for wing_name, room_name in missing:
                wing_obj = (
                    Wing.objects.filter(name=wing_name).first()
                    or Wing.objects.get_or_create(name=given(wing_name, "wing"))[0]
                )
                found[wing_name, room_name], _ = Room.objects.get_or_create(
                    wing=wing_obj, name=given(room_name, "room")
                )
    return {place: found[names] for place, names in cleaned.items()}


def wing_to_import_into(name: object) -> str:
    """The wing an import files every record into (the API's `wing`, `import_memories --wing`),
    checked as a write's: a stored wing of that name (`place_name`) is written into as it is
    named, unless no key can name it (`unscopable`), which an import never writes to; any other
    is a new wing's name (`clean_place_name`: not blank, no '/', '*' nor ','), refused before
    the import is recorded."""
    wing = place_name(name, "wing")
    if unscopable(wing) or not Wing.objects.filter(name=wing).exists():
        return clean_place_name(name, "wing")
    return wing


def rooms_named(names: set[Place]) -> dict[Place, Room]:
    """The rooms that exist among those named by (wing, room) names already cleaned; none is
    created."""
    return _rooms_named(names)


def _rooms_named(names: set[Place]) -> dict[Place, Room]:
    if not names:
        return {}
    query = Q()
    for wing, room in names:
        query |= Q(wing__name=wing, name=room)
    rooms = Room.objects.select_related("wing").filter(query)
    return {(room.wing.name, room.name): room for room in rooms}


def wing_rename(*, wing: Wing, name: str, actor: Actor = None) -> Wing:
    """Give a wing a new name, with its audit row (before and after) in the same transaction.
    The new name is locked as a write creating that wing locks it, so the two queue."""
    name = clean_place_name(name, "wing")
    with transaction.atomic():
        hold_locks([lock_key("wing", name)])
        wing = Wing.objects.select_for_update().get(pk=wing.pk)
        before = wing.name
        if name == before:
            return wing
        if Wing.objects.filter(name=name).exists():
            raise Conflict(f"A wing named {name!r} already exists.")
        wing.name = name
        wing.save(update_fields=["name"])
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.WING_RENAME,
            target_type=AuditTarget.WING,
            target_id=wing.pk,
            before={"name": before},
            after={"name": name},
        )
    return wing


def room_change(*, room: Room, name: str, wing: Wing, actor: Actor = None) -> Room:
    """Rename a room or move it to another wing (or both), with its audit row in the same
    transaction: `room.move` when the wing changes, `room.rename` otherwise. A move that would
    leave a supersession spanning two wings is refused (`refuse_splitting_supersessions`:
    `rooms_move` moves such rooms together)."""
    name = clean_place_name(name, "room")
    with transaction.atomic():
        hold_locks([lock_key("room", wing.name, name)])
        room = Room.objects.select_for_update(of=("self",)).select_related("wing").get(pk=room.pk)
        if (room.wing.name, room.name) == (wing.name, name):
            return room
        if Room.objects.filter(wing=wing, name=name).exclude(pk=room.pk).exists():
            raise Conflict(f"{wing.name} already has a room named {name!r}.")
        if room.wing_id != wing.pk:
            refuse_splitting_supersessions([room], wing)
            hold_destination(wing)
        _change(room, wing, name, actor)
    return room


def rooms_move(*, rooms: Iterable[Room], wing: Wing, actor: Actor = None) -> list[Room]:
    """Move rooms to a wing as one change, each with its audit row (`room.move`): rooms whose
    drawers supersede each other's go together, where moving one alone is refused. Refused
    whole, nothing moved, when the wing has a room of one's name or two share one, or when a
    supersession would still span two wings. The rooms moved (those not in the wing already).

    Locked as `room_change` locks one: their new names (queueing with a write creating one),
    then their rows, in id order."""
    wanted = sorted({room.pk for room in rooms})
    with transaction.atomic():
        names = dict(Room.objects.filter(pk__in=wanted).values_list("pk", "name"))
        hold_locks(lock_key("room", wing.name, name) for name in names.values())
        held = Room.objects.select_for_update(of=("self",)).select_related("wing")
        held = held.filter(pk__in=wanted)
        moving = [room for room in held.order_by("pk") if room.wing_id != wing.pk]
        if any(names.get(room.pk) != room.name for room in moving):
            raise Conflict("A room was renamed meanwhile: choose the rooms again.")
        _refuse_taken_names(moving, wing)
        refuse_splitting_supersessions(moving, wing)
        if moving:
            hold_destination(wing)
        for room in moving:
            _change(room, wing, room.name, actor)
    return moving


def hold_destination(wing: Wing) -> None:
    """Hold the wing rooms move into until the move commits (FOR NO KEY UPDATE, after the
    rooms: a move locks rooms' rows only, never their wings, so opposite moves never wait on
    each other), so an import's reversal removing the wings it made and left empty skips it
    rather than deleting it under the move; one deleted already is `wing_not_found`."""
    held = Wing.objects.select_for_update(no_key=True).filter(pk=wing.pk)
    if held.values_list("pk", flat=True).first() is None:
        raise NotFound("The wing was deleted meanwhile.", code="wing_not_found")


def _refuse_taken_names(moving: list[Room], wing: Wing) -> None:
    names = [room.name for room in moving]
    taken = set(Room.objects.filter(wing=wing, name__in=names).values_list("name", flat=True))
    twice = {name for name in names if names.count(name) > 1}
    clash = sorted(taken | twice)
    if clash:
        raise Conflict(
            f"{wing.name} would have two rooms named {clash[0]!r}: rename one first.",
            details={"field": "wing", "names": clash},
        )


def _change(room: Room, wing: Wing, name: str, actor: Actor) -> None:
    before = {"wing": room.wing.name, "name": room.name}
    moved = room.wing_id != wing.pk
    room.wing, room.name = wing, name
    room.save(update_fields=["wing", "name"])
    AuditEntry.objects.record(
        actor=actor,
        action=AuditAction.ROOM_MOVE if moved else AuditAction.ROOM_RENAME,
        target_type=AuditTarget.ROOM,
        target_id=room.pk,
        before=before,
        after={"wing": wing.name, "name": name},
    )


SPLIT_ROOMS_NAMED = 5  # rooms a refused move names; the details list them all


def supersessions_split(rooms: Sequence[Room], wing: Wing) -> list[str]:
    """The rooms (`wing/room`) that would be left in another wing than `wing` while a drawer of
    theirs supersedes a drawer of `rooms`, or is superseded by one, were `rooms` moved to it."""
    moving = [room.pk for room in rooms]
    if not moving:
        return []
    outward = (
        Drawer.objects.filter(room__in=moving, superseded_by__isnull=False)
        .exclude(superseded_by__room__in=moving)
        .exclude(superseded_by__room__wing=wing)
        .values_list("superseded_by__room__wing__name", "superseded_by__room__name")
    )
    inward = (
        Drawer.objects.filter(superseded_by__room__in=moving)
        .exclude(room__in=moving)
        .exclude(room__wing=wing)
        .values_list("room__wing__name", "room__name")
    )
    return sorted({f"{w}/{r}" for w, r in [*outward.distinct(), *inward.distinct()]})


def refuse_splitting_supersessions(rooms: Sequence[Room], wing: Wing) -> None:
    """A move is refused (409 `room_move_splits_supersessions`) where it would leave a drawer
    superseded by a drawer of another wing (a key of one would be shown a drawer id it cannot
    read, as `supersede_across_wings` refuses to make)."""
    split = supersessions_split(rooms, wing)
    if not split:
        return
    named = ", ".join(split[:SPLIT_ROOMS_NAMED]) + (
        " and others" if split[SPLIT_ROOMS_NAMED:] else ""
    )
    raise Conflict(
        f"Drawers here supersede, or are superseded by, drawers of {named}: moved to wing "
        f"{wing.name!r} without them, those supersessions would span two wings (a key of one "
        "would be shown a drawer id it cannot read). Move the rooms together: select them in "
        "the room list and choose the action 'Move the selected rooms to a wing'.",
        code="room_move_splits_supersessions",
        details={"field": "wing", "rooms": split},
    )


def room_delete(*, room: Room, actor: Actor = None) -> None:
    """Delete an empty room, audited (`room.delete`, its wing and name before). The room's write
    lock is held first, as a write into it holds it, then the room: a room holding drawers (one
    written meanwhile included) is refused (409 `room_not_empty`), never a foreign key failing;
    one deleted meanwhile is `room_not_found`."""
    with transaction.atomic():
        hold_lock(room_writes(room.pk))
        held = (
            Room.objects.select_for_update(of=("self",))
            .select_related("wing")
            .filter(pk=room.pk)
            .first()
        )
        if held is None:
            raise NotFound("The room was deleted already.", code="room_not_found")
        if Drawer.objects.filter(room=held).exists():
            raise Conflict(
                f"{held} holds drawers: delete or move them first.", code="room_not_empty"
            )
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.ROOM_DELETE,
            target_type=AuditTarget.ROOM,
            target_id=held.pk,
            before={"wing": held.wing.name, "name": held.name},
        )
        held.delete()


def wing_delete(*, wing: Wing, actor: Actor = None) -> None:
    """Delete a wing that has no room, audited (`wing.delete`, its name before). The lock a
    write creating a room in it holds is held first (its name's, `rooms_get_or_create`), then
    its row (which a room moving into it holds, `hold_destination`): a wing holding a room (one
    made or moved there meanwhile included) is refused (409 `wing_not_empty`), never the rooms'
    foreign key failing; one deleted meanwhile is `wing_not_found`."""
    with transaction.atomic():
        name = Wing.objects.filter(pk=wing.pk).values_list("name", flat=True).first()
        if name is not None:
            hold_lock(_wing_creation(name))
        held = Wing.objects.select_for_update().filter(pk=wing.pk).first()
        if held is None:
            raise NotFound("The wing was deleted already.", code="wing_not_found")
        if held.name != name:  # its lock was another name's: a room may be made in it now
            raise Conflict("The wing was renamed meanwhile: delete it again.")
        if Room.objects.filter(wing=held).exists():
            raise Conflict(f"{held} has rooms: delete or move them first.", code="wing_not_empty")
        _wing_deleted(held, actor)


def wing_delete_if_empty(*, wing: Wing, actor: Actor = None) -> bool:
    """`wing_delete` for a caller past the wing's lock in the canonical order (an import's
    reversal, holding rooms' writes, removing a wing it made), which may not wait on it: the
    wing is deleted, audited the same, only if no one holds its lock or its row (creating a
    room in it, moving one into it) and it has no room. Whether it was deleted."""
    with transaction.atomic():
        if not lock_taken(_wing_creation(wing.name)):
            return False
        held = Wing.objects.select_for_update(skip_locked=True).filter(pk=wing.pk).first()
        if held is None or held.name != wing.name or Room.objects.filter(wing=held).exists():
            return False
        _wing_deleted(held, actor)
    return True


def _wing_creation(name: str) -> int:
    """The lock a write creating a room in the wing of that name holds (`rooms_get_or_create`:
    by the name looked up)."""
    return lock_key("wing", lookup_form(name))


def _wing_deleted(wing: Wing, actor: Actor) -> None:
    AuditEntry.objects.record(
        actor=actor,
        action=AuditAction.WING_DELETE,
        target_type=AuditTarget.WING,
        target_id=wing.pk,
        before={"name": wing.name},
    )
    wing.delete()
