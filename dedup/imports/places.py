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

from django.db.models import ForeignObjectRel

from dedup.errors import DomainError
from dedup.services import room_delete, wing_delete_if_empty
from dedup.services.config import Actor
from palace.models import Drawer, Import, Room, Wing


def places_removed(
    imported: Import, rooms: Iterable[Room], actor: Actor
) -> tuple[list[str], list[str]]:
    """Remove the rooms among `rooms` (those of the drawers the reversal removed) and their
    wings that the import created and left empty; their names ("wing/room", "wing")."""
    made = sorted(
        {room.pk: room for room in rooms if room.created_at >= imported.created_at}.values(),
        key=str,
    )
    removed: list[str] = []
    for room in made:
        if Drawer.objects.filter(room=room).exists() or _referred_to(room):
            continue
        try:
            room_delete(room=room, actor=actor)
        except DomainError:  # deleted meanwhile (by a curator)
            continue
        removed.append(str(room))
    wings = {room.wing.pk: room.wing for room in made if str(room) in removed}
    return removed, [
        wing.name
        for wing in sorted(wings.values(), key=str)
        if _wing_removed(wing, imported, actor)
    ]


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


def _wing_removed(wing: Wing, imported: Import, actor: Actor) -> bool:
    """Delete the wing if the import made it and it has no room now, no one making one in it."""
    if wing.created_at < imported.created_at:
        return False
    return wing_delete_if_empty(wing=wing, actor=actor)
