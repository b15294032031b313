"""Drawer ids derived from what a write is, so that making it again is a replay that stores
nothing: an import's record (`dedup.imports.ids`), a mined chunk (`dedup.mining`), a checkpoint's
item (`dedup.services.checkpoints`).

Keyed, because a drawer id is unique across the store and a write may choose its own: an id
anyone can compute is an id anyone can take first. Derived as `uuid5(namespace, name)` from
public facts alone (a record's format and id, a file's path and text, a user's number and a
checkpoint's id), a key of another wing could write a drawer under an import's id before the
import did (the record was then refused as malformed, `drawer_id_taken`), and could ask whether
some wing held a given record (the refusal said the id was used). So the name is first put
through HMAC-SHA256 under the installation's key: the id is `uuid5(namespace, HMAC(key, name))`
(the digest in hex), the same for the same write on this installation, and unknowable without
the key. Each caller also puts in the name the scope its replays are for (an import's record its
wing, a mined chunk its wing and room, a checkpoint its caller), so two wings importing one
record never meet on one id either: the second import's refusal would have told its key the
first wing held it.

The key is `palace.models.InstallationKey`, a random value made once by a migration and kept in
the database, not one derived from SECRET_KEY: the ids must stay what they are as long as the
drawers do (a file imported again a year on must still replay), and SECRET_KEY is rotated when
it leaks or someone leaves (it signs sessions), which would turn every replay into new drawers.
The table's key moves with the data it keyed (a dump restored holds both), is never rotated,
and tells whoever can read it nothing the drawers themselves do not.

A name in the scope is the name a place had when the write was made: a wing or room renamed
since (by `api/0002` and `api/0003`, which gave stored names the form a write gives them, or by
a curator; a room moved to another wing) derives other ids from the same write. A caller that
replays writes into a room asks for its former names (`former_names`, from the audit log) and
uses an id derived under one where that room holds it, as below.

A store upgraded holds drawers under the ids derived before (`legacy_id`: uuid5 of the bare
name). A write that would replay one of those in its own room is given the old id instead
(`legacy_ids_here`), so importing or mining the same files again after the upgrade still stores
nothing new; an old id held anywhere else is never used, so it neither tells nor takes anything.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from collections.abc import Iterable

from palace.models import AuditAction, AuditEntry, AuditTarget, Drawer, InstallationKey, Room

DRAWER_IDS = "drawer-ids"  # the key's purpose (migration palace 0029 makes it)
SEPARATOR = "\x1f"  # no label holds a control character: a name's parts cannot run together


def derivation_key() -> bytes:
    """The installation's key for drawer ids, made now if the database lacks it (one emptied
    since it was migrated, as a test's is). Read in the transaction of the writes it keys: one
    made in a transaction that rolls back goes with the drawers derived from it."""
    value = (
        InstallationKey.objects.filter(purpose=DRAWER_IDS).values_list("value", flat=True).first()
    )
    if value is None:
        value = InstallationKey.objects.get_or_create(
            purpose=DRAWER_IDS, defaults={"value": secrets.token_hex(32)}
        )[0].value
    return value.encode()


def derived_id(key: bytes, namespace: uuid.UUID, *parts: str) -> uuid.UUID:
    """The id of a write named by `parts` (which scope it: see the module), under `key`."""
    name = SEPARATOR.join(parts).encode("utf-8", errors="surrogatepass")
    return uuid.uuid5(namespace, hmac.new(key, name, hashlib.sha256).hexdigest())


def legacy_id(namespace: uuid.UUID, name: str) -> uuid.UUID | None:
    """The id derived before ids were keyed: None for a name that could not be derived then (a
    lone surrogate, which UTF-8 cannot encode), so no drawer holds it."""
    try:
        return uuid.uuid5(namespace, name)
    except UnicodeEncodeError:
        return None


def legacy_ids_here(wanted: Iterable[tuple[uuid.UUID, Room]]) -> set[tuple[uuid.UUID, int]]:
    """Of these old ids, each with the room a write now goes to, those that room holds, as (id,
    room id): a drawer stored in it under the id, or one deleted from a room of its name (the
    write is then refused, as it was before the upgrade: a deleted drawer's id is not used
    again, and its record is not stored again). Two queries, however many ids."""
    rooms: dict[uuid.UUID, set[Room]] = {}
    for drawer_id, room in wanted:
        rooms.setdefault(drawer_id, set()).add(room)
    if not rooms:
        return set()
    held = Drawer.objects.filter(uuid__in=rooms).values_list("uuid", "room_id")
    here = {(drawer_id, room_id) for drawer_id, room_id in held}
    deleted = AuditEntry.objects.filter(
        action=AuditAction.DRAWER_DELETE,
        target_type=AuditTarget.DRAWER,
        target_id__in=[str(drawer_id) for drawer_id in rooms],
    ).values_list("target_id", "before__room")
    for target, named in deleted:
        drawer_id = uuid.UUID(target)
        here |= {(drawer_id, room.pk) for room in rooms[drawer_id] if str(room) == named}
    return {pair for pair in here if any(room.pk == pair[1] for room in rooms[pair[0]])}


def former_names(room: Room) -> set[tuple[str, str]]:
    """The (wing, room) names the room may have been written into under, other than its names
    now: those its renames and moves (`room.rename`, `room.move`) and its wings' renames
    (`wing.rename`: a wing it is or was in, renamed before or after) left in the audit log, by
    `api/0002`, `api/0003` or a curator. Every wing name is paired with every room name: a
    pair it never had derives ids no room holds. Two queries, and one more per round of
    wings' renames followed back."""
    now = (room.wing.name, room.name)
    wings, rooms = {now[0]}, {now[1]}
    changes = AuditEntry.objects.filter(
        target_type=AuditTarget.ROOM,
        target_id=str(room.pk),
        action__in=[AuditAction.ROOM_RENAME, AuditAction.ROOM_MOVE],
    ).values_list("before", "after")
    for before, after in changes:
        for names in (before or {}, after or {}):
            wings.add(names.get("wing") or now[0])
            rooms.add(names.get("name") or now[1])
    renames = AuditEntry.objects.filter(
        action=AuditAction.WING_RENAME, target_type=AuditTarget.WING
    )
    wanted = set(wings)
    while wanted:  # each round follows the renames into the names found in the one before
        found = renames.filter(after__name__in=sorted(wanted)).values_list("before", flat=True)
        wanted = {before["name"] for before in found if before and "name" in before} - wings
        wings |= wanted
    return {(wing, name) for wing in wings for name in rooms} - {now}
