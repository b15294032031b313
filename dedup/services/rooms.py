"""Wings and rooms: created on first use, by whichever write names them."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.db.models import Q

from dedup.locks import hold_locks, lock_key
from dedup.validation import clean_label
from palace.models import Room, Wing

# A place as a caller names it: (wing, room).
Place = tuple[str, str]


def room_get_or_create(*, wing: str, room: str) -> Room:
    """Wings and rooms are created on first use."""
    return rooms_get_or_create([(wing, room)])[(wing, room)]


def rooms_get_or_create(places: Iterable[Place]) -> dict[Place, Room]:
    """The rooms of several places, by the (wing, room) names given, created on first use.

    Creating a wing or a room waits on anyone creating the same one, so the places missing are
    locked first, all of them, in the canonical order (wings, then rooms, each sorted): two
    requests creating the same new wings in opposite order then queue instead of deadlocking.
    """
    cleaned = {
        place: (clean_label(place[0], "wing"), clean_label(place[1], "room")) for place in places
    }
    wanted = set(cleaned.values())
    with transaction.atomic():
        found = _rooms_named(wanted)
        missing = sorted(wanted - found.keys())
        if missing:
            hold_locks(lock_key("wing", wing) for wing, _ in missing)
            hold_locks(lock_key("room", wing, room) for wing, room in missing)
            for wing_name, room_name in missing:
                wing_obj, _ = Wing.objects.get_or_create(name=wing_name)
                found[wing_name, room_name], _ = Room.objects.get_or_create(
                    wing=wing_obj, name=room_name
                )
    return {place: found[names] for place, names in cleaned.items()}


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
