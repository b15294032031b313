"""What an earlier write already stored for a write: the drawer of the id it replays, or the
room's drawer of the same name and content (the write path's phase before the candidates).

A drawer id is unique across the store, so a client-chosen id that names a drawer elsewhere must
be refused (409 `drawer_id_taken`); but the writer may not reach the room that holds it (an agent
key of other wings), so the refusal says nothing about where: an id used in another room and one
whose drawer was deleted are refused in the same words, with the id alone in the details. Only an
id used in the very room written to, for other content, says so: the writer is writing there.
"""

from __future__ import annotations

import uuid as uuid_module

from django.db import connection

from dedup.errors import Conflict, DrawerNameTaken
from palace.models import AuditAction, AuditEntry, AuditTarget, Drawer, Room


def earlier_drawer(
    *,
    room: Room,
    content: str,
    name: str | None,
    drawer_id: uuid_module.UUID | None,
    name_as_given: str | None = None,
) -> Drawer | None:
    """The drawer an earlier write already stored for this one: the same id replayed, or the
    room's drawer of the same name and content. None when this write is new.

    A name is found in the form a new drawer is given it (`optional_written_name`), or else as
    it was given (`name_as_given`): a drawer stored under "notes\u200d" before that form is
    still the one a write naming it means, not a reason to store a second beside it."""
    if drawer_id is not None:
        replayed = id_replayed(drawer_id, room)
        if replayed is not None:
            if replayed.content != content:  # not a replay: the new content would be lost
                raise Conflict(
                    "That drawer id is already used in this room for other content.",
                    code="drawer_id_taken",
                    details={"drawer": str(drawer_id)},
                )
            return replayed
    if name is None:
        return None
    names = {name} if name_as_given is None else {name, name_as_given}
    found = Drawer.objects.current().filter(room=room, name__in=names)
    named = min(found, key=lambda drawer: drawer.name != name, default=None)
    if named is None:
        return None
    if named.content == content:
        return named
    raise DrawerNameTaken(
        f"The room already holds a drawer named {named.name!r} with other content.",
        details={"drawer": str(named.uuid), "name": named.name},
    )


# Said of an id used in another room and of a deleted drawer's alike (see the module).
# No advice to choose another: an import's record cannot, and the words are its malformed reason.
ID_TAKEN = (
    "That drawer id is taken: an id names one drawer, in one room, for good (a deleted drawer's "
    "is not used again)."
)


def id_taken(drawer_id: uuid_module.UUID) -> Conflict:
    return Conflict(ID_TAKEN, code="drawer_id_taken", details={"drawer": str(drawer_id)})


def id_replayed(drawer_id: uuid_module.UUID, room: Room) -> Drawer | None:
    """The drawer already stored under this id in this room, or None for an id never used. An id
    whose drawer was deleted is taken for good (its audit rows name it), so one id never names
    two drawers in the history; it is refused as one used in another room is, in the same words
    (`id_taken`). One round trip asks both (indexed), by hand-written SQL: on a replayable write
    (every imported record is one) building the ORM's queries cost more than running them."""
    existing_id, deleted = _id_used(drawer_id)
    if existing_id is None:
        if deleted:
            raise id_taken(drawer_id)
        return None
    existing = Drawer.objects.filter(pk=existing_id).first()
    if existing is None:  # deleted since the first query: ask again (the audit names it now)
        return id_replayed(drawer_id, room)
    if existing.room_id != room.id:
        raise id_taken(drawer_id)
    return existing


def _id_used(drawer_id: uuid_module.UUID) -> tuple[int | None, bool]:
    """The id of the drawer stored under this uuid (or None), and whether the audit names a
    drawer of this uuid deleted."""
    value = Drawer._meta.get_field("uuid").get_db_prep_value(drawer_id, connection)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT id FROM {Drawer._meta.db_table} WHERE uuid = %s), "
            f"EXISTS (SELECT 1 FROM {AuditEntry._meta.db_table} WHERE target_type = %s "
            "AND target_id = %s AND action = %s)",
            [value, AuditTarget.DRAWER.value, str(drawer_id), AuditAction.DRAWER_DELETE.value],
        )
        existing_id, deleted = cursor.fetchone()
    return existing_id, bool(deleted)
