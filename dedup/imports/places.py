"""The rooms and wings an import created that its reversal leaves empty: removed with it, in its
transaction, so a reversed import leaves the palace as it found it (`GET /api/wings` had listed
its rooms with no drawer).

A room goes when it was created since the import was (its `created_at`), holds no drawer once
the import's are removed, and nothing else refers to it (a sweep's part, which its deletion would
take with it): through `room_delete`, audited as any room's deletion (`room.delete`). A wing goes
when it was created since the import was and has no room left: through `wing_delete_if_empty`,
audited as any wing's deletion (`wing.delete`). Each has its own audit row, in the reversal's
transaction, beside the reversal's own (`import.reverse`, which lists them too). A place that
was there before the import, or that holds anyone else's drawer, stays.

A place an import made that its reversal leaves (holding a drawer it handed to a later import
that had found it stored, or another import's room) is recorded on the reversed import
(`options["places_left"]`, by id: a name may change): the reversal that later leaves it empty
removes it as one of its own, under the same rules. Reversing every import then leaves no place
any of them made, in any order (a trial had reversed the first import of wing `imp`, whose
rooms held drawers handed to the second, then the second: the rooms, made before the second,
stayed empty). Reversals take turns (`reverse`), so each knows what those before it left: two at
once, of imports sharing only a wing, each kept it for the other's room.

Locks: the reversal holds the writes of the import's rooms already (`room_delete` takes that
lock again, held). A wing's creation lock comes before rooms' writes in the canonical order
(`dedup.locks`), so it is only tried, and its row only taken if no one holds it
(`wing_delete_if_empty`): a wing that someone is creating a room in, or moving one into, is not
empty and stays. Agent keys name wings
by name, not by row: a key of a removed wing still reaches it (`GET /api/wings` shows it with no
room), and its next write makes it again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import ForeignObjectRel

from dedup.errors import DomainError
from dedup.services import room_delete, wing_delete_if_empty
from dedup.services.config import Actor
from palace.models import Drawer, Import, Room, Wing

PLACES_LEFT = "places_left"  # the key of `Import.options` recording them: {"rooms", "wings"}


@dataclass(frozen=True)
class Places:
    """What a reversal did to the places: the rooms ("wing/room") and wings removed, and the
    ids of those the import made that stay (`left`, recorded on it: {"rooms", "wings"})."""

    rooms_removed: list[str]
    wings_removed: list[str]
    left: dict[str, list[int]]


def places_removed(
    imported: Import, removed_drawers: Iterable[Drawer], actor: Actor, *, held: Iterable[Drawer]
) -> Places:
    """Remove the rooms of the drawers the reversal removed, and their wings, that the import,
    or an import reversed before it, created and left empty. `held`: every drawer the import
    held (their rooms and wings, those removed or not, are those it may have made)."""
    earlier = _left_by_reversed(imported)
    rooms = {drawer.room.pk: drawer.room for drawer in removed_drawers}
    made = sorted(
        (room for room in rooms.values() if _made(room, imported, earlier["rooms"])), key=str
    )
    removed: list[Room] = []
    for room in made:
        if Drawer.objects.filter(room=room).exists() or _referred_to(room):
            continue
        try:
            room_delete(room=room, actor=actor)
        except DomainError:  # deleted meanwhile (by a curator)
            continue
        removed.append(room)
    wings = {room.wing.pk: room.wing for room in removed}
    wings_removed = [
        wing
        for wing in sorted(wings.values(), key=str)
        if _made(wing, imported, earlier["wings"]) and wing_delete_if_empty(wing=wing, actor=actor)
    ]
    return Places(
        rooms_removed=[str(room) for room in removed],
        wings_removed=[wing.name for wing in wings_removed],
        left=_left(
            imported, [drawer.room for drawer in held], {room.pk for room in removed}, wings_removed
        ),
    )


def _made(place: Room | Wing, imported: Import, left: set[int]) -> bool:
    """Whether the import made the place (created since it was), or an import reversed before
    it made it and left it (`PLACES_LEFT`)."""
    return place.created_at >= imported.created_at or place.pk in left


def _left_by_reversed(imported: Import) -> dict[str, set[int]]:
    """The places the imports reversed before this one made and left, by id."""
    left: dict[str, set[int]] = {"rooms": set(), "wings": set()}
    reversed_ = Import.objects.filter(status=Import.Status.REVERSED).exclude(pk=imported.pk)
    for options in reversed_.filter(options__has_key=PLACES_LEFT).values_list("options", flat=True):
        for kind, ids in left.items():
            ids.update(options[PLACES_LEFT].get(kind, []))
    return left


def _left(
    imported: Import, rooms: list[Room], removed: set[int], wings_removed: list[Wing]
) -> dict[str, list[int]]:
    """The rooms and wings the import made (created since it was) that its reversal leaves."""
    own = [room for room in rooms if room.created_at >= imported.created_at]
    gone = {wing.pk for wing in wings_removed}
    wings = {room.wing for room in rooms if room.wing.created_at >= imported.created_at}
    return {
        "rooms": sorted({room.pk for room in own} - removed),
        "wings": sorted({wing.pk for wing in wings} - gone),
    }


def _referred_to(room: Room) -> bool:
    """Whether a row other than a drawer refers to the room (a sweep's part): deleting the room
    would delete it too. Asked of every relation to rooms, the hidden ones included, so this
    package need not know the apps that hold them."""
    for relation in Room._meta.get_fields(include_hidden=True):
        if not isinstance(relation, ForeignObjectRel) or relation.related_model is Drawer:
            continue
        if relation.related_model._base_manager.filter(**{relation.field.name: room}).exists():
            return True
    return False
