"""Checkpoints: an agent's batch of memories written under one client-chosen id, all or nothing,
and replayable."""

from __future__ import annotations

import enum
import hashlib
import json
import uuid as uuid_module
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.db import transaction

from dedup.derived_ids import derivation_key, derived_id
from dedup.errors import Conflict, ContentTooLarge, DomainError, DrawerNameTaken
from dedup.locks import advisory_lock
from dedup.services.config import Actor, WriteMode
from dedup.services.drawers import drawer_write, hold_write_locks
from dedup.services.rooms import Place, rooms_get_or_create
from dedup.validation import NAME_MAX_LENGTH, clean_name, label_form, lookup_form, written_name
from palace.models import DIARY_ROOM, Checkpoint, Drawer, Room, acting_user

CHECKPOINT_NAMESPACE = uuid_module.UUID("6f1d6f2e-3c43-4c1e-9f55-2b1de0a4c0a1")

# The rooms a checkpoint files into: each agent's diary (palace's DIARY_ROOM), and one room of
# entries per wing; in a wing the item names, a preference or a project goes to a room of its
# destination's (`Destination.room_in`).
ENTRIES_ROOM = "entries"

# What a checkpoint answers, and what its replay answers again (stored as JSON).
CheckpointResult = dict[str, Any]


class Destination(enum.StrEnum):
    GENERAL = "general"
    PREFERENCE = "preference"
    PROJECT = "project"
    DIARY = "diary"

    @property
    def default_wing(self) -> str:
        return _DEFAULT_WINGS[self]

    @property
    def room(self) -> str:
        return DIARY_ROOM if self is Destination.DIARY else ENTRIES_ROOM

    def room_in(self, wing: str | None) -> str:
        """The room an item of this destination goes to: without a wing, its destination's own
        wing's (`room`); in a wing the item names, the room its destination names, so that
        the destination is not lost there (a key of some wings must name one): `preferences`,
        `projects`, `entries` for a general item, `diary`."""
        if not wing or self in (Destination.GENERAL, Destination.DIARY):
            return self.room
        return _DEFAULT_WINGS[self]

    @property
    def write_mode(self) -> WriteMode:
        return WriteMode.DIARY if self is Destination.DIARY else WriteMode.MEMORY


_DEFAULT_WINGS = {
    Destination.GENERAL: "general",
    Destination.PREFERENCE: "preferences",
    Destination.PROJECT: "projects",
    Destination.DIARY: "diary",
}


@dataclass(frozen=True)
class CheckpointItem:
    """An item as its caller gave it (its `source` None if it gave none), with the agent it is
    written as."""

    content: str
    destination: Destination
    agent: str
    wing: str | None = None
    name: str | None = None
    kind: str = ""
    source: dict[str, Any] | None = None


def checkpoint_payload_hash(items: Iterable[CheckpointItem]) -> str:
    """What a replay must send again: the items as the caller gave them, and the agent each is
    written as (the caller's own, whichever route it calls by)."""
    canonical = json.dumps(
        [[i.content, str(i.destination), i.agent, i.wing, i.name, i.kind, i.source] for i in items],
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def checkpoint_write(
    *,
    key: str,
    items: list[CheckpointItem],
    actor: Actor = None,
    default_source: dict[str, Any] | None = None,
) -> tuple[CheckpointResult, bool]:
    """Write a batch under a client-chosen id, in order, in one transaction: later items see
    earlier ones, an exact copy is not stored and is counted in `duplicates`, and a failing item
    fails the whole batch. Replaying the id returns the first result and stores nothing.

    Every lock the items need (their new wings and rooms, names and texts) is taken up front in
    the canonical order, so two batches holding the same ones in opposite order never deadlock.

    A checkpoint id is the caller's own (an agent's key's user, or a person; a command's, no
    one's): two agents that both choose "session-1" write two checkpoints, and neither replays
    nor is refused the other's.

    `default_source` is the provenance an item giving none records (the MCP server's
    `{"via": "mcp", ...}`): the route's, not the caller's, so not part of what a replay must
    match (`checkpoint_payload_hash`), and the same call replays through either route.

    Returns (result, replayed).
    """
    # Not one that shows nothing (`clean_name`: a Braille blank, a selector alone), and in the
    # form a name is given (`written_name`, `label_form`): matched as written, "cpx-3\u200d" and
    # "cp-東京\ufe0f" were checkpoints beside "cpx-3" and "cp-東京" that look the same, so an
    # agent whose id picked up a stray joiner wrote its batch twice. One stored before under
    # its id as written is still found by it (`_checkpoint_replayed`), so it still replays.
    as_written = clean_name(key, "id", max_length=NAME_MAX_LENGTH)
    key = written_name(as_written, "id", max_length=NAME_MAX_LENGTH)
    _refuse_too_much(items)
    payload_hash = checkpoint_payload_hash(items)
    user = acting_user(actor)
    owner = user.pk if user is not None else None
    with transaction.atomic():
        advisory_lock("checkpoint", owner, key)
        hashes = _replay_hashes(items, default_source)
        replayed = _checkpoint_replayed(key, as_written, owner, hashes)
        if replayed is not None:
            return _as_now(replayed), True
        _refuse_clashing_names(items)
        rooms = rooms_get_or_create(_place(item) for item in items)
        hold_write_locks((rooms[_place(item)], item.content, item.name) for item in items)
        secret = derivation_key()
        outcomes = [
            _item_write(key, owner, index, item, rooms[_place(item)], secret, default_source)
            for index, item in enumerate(items)
        ]
        result = _checkpoint_result(key, outcomes)
        Checkpoint.objects.create(
            key=key, payload_hash=payload_hash, result=result, created_by=user
        )
    return result, False


def _replay_hashes(items: list[CheckpointItem], default_source: dict[str, Any] | None) -> set[str]:
    """The payload hashes a replay of these items matches: the items as given, and (for a
    checkpoint stored before the hash left the route's default out) the items with that default
    filled in, as it was hashed then: an MCP checkpoint of then still replays over MCP."""
    filled = [replace(item, source=item.source or default_source) for item in items]
    return {checkpoint_payload_hash(items), checkpoint_payload_hash(filled)}


def _checkpoint_replayed(
    key: str, as_written: str, owner: int | None, payload_hashes: set[str]
) -> CheckpointResult | None:
    """The first result of the caller's checkpoint id used before with the same items; None if
    unused. The id is found in its form (`key`) or as written: one stored before ids were given
    that form (under "cpx-3\u200d") is still the one its replay means; of two such rows, the
    one the items match, the one stored as written first."""
    rows = Checkpoint.objects.filter(key__in={key, as_written}, created_by=owner)
    found = sorted(
        rows, key=lambda row: (row.payload_hash not in payload_hashes, row.key != as_written)
    )
    if not found:
        return None
    existing = found[0]
    if existing.payload_hash not in payload_hashes:
        raise Conflict(
            "That checkpoint id was already used with other items.",
            code="checkpoint_id_taken",
            details={"id": key},
        )
    return existing.result


def _refuse_too_much(items: list[CheckpointItem]) -> None:
    """A checkpoint writes its items in one transaction, holding their rooms until it commits:
    together they carry at most one drawer's content (`CASTELLAN_MAX_CONTENT_BYTES`), so one
    request holds a room for seconds, not minutes (1,000 items of 12 KB, near variants of each
    other, held one for six minutes)."""
    limit = settings.CASTELLAN_MAX_CONTENT_BYTES
    size = sum(
        len(item.content.encode("utf-8", errors="surrogatepass"))
        for item in items
        if isinstance(item.content, str)  # anything else is refused as the item is written
    )
    if size > limit:
        raise ContentTooLarge(
            f"the items' content is {size} bytes together; a checkpoint carries at most {limit} "
            "bytes (one drawer's limit): send the rest in another checkpoint.",
            details={"field": "items", "limit": limit, "size": size},
        )


def _place(item: CheckpointItem) -> Place:
    return (item.wing or item.destination.default_wing, item.destination.room_in(item.wing))


def _refuse_clashing_names(items: list[CheckpointItem]) -> None:
    """Two items naming one drawer of one room with other content: refused naming both, not
    as the second item against a drawer the first would have stored (rolled back, so named
    nowhere)."""
    first: dict[tuple[str, str, str], int] = {}
    for index, item in enumerate(items):
        if not item.name:
            continue
        wing, room = _place(item)  # as rooms are found: "general " is general
        earlier = first.setdefault(
            (lookup_form(wing), lookup_form(room), label_form(item.name)), index
        )
        if earlier != index and items[earlier].content != item.content:
            raise DrawerNameTaken(
                f"Items {earlier} and {index} name the same drawer {item.name!r} with other "
                "content.",
                details={"items": [earlier, index], "name": item.name},
            )


def _item_write(
    key: str,
    owner: int | None,
    index: int,
    item: CheckpointItem,
    room: Room,
    secret: bytes,
    default_source: dict[str, Any] | None,
) -> dict[str, Any]:
    """Write one item under an id derived from its caller (one of no one's, a service's caller
    naming no user, is `-`'s), the checkpoint's id and its index, keyed with the installation's
    key (`secret`, `dedup.derived_ids`): the same item of the same checkpoint, the same id, and
    no one else can compute it (a user's number and "session-1" are easily guessed: a key of
    another wing wrote a drawer under the id first, and the whole checkpoint was refused).

    A checkpoint replays by its row, before any item is written, so those written before
    (unkeyed: `owner<US>key<US>index`, or `key<US>index` before ids were the callers') need no
    old id kept: none of their items is written again, and no checkpoint now meets their ids."""
    owner_name = "-" if owner is None else str(owner)
    try:
        written = drawer_write(
            room=room,
            content=item.content,
            mode=item.destination.write_mode,
            name=item.name,
            kind=item.kind,
            agent=item.agent,
            source={
                "checkpoint": key,
                "item": index,
                "destination": str(item.destination),
                **(item.source or default_source or {}),
            },
            drawer_id=derived_id(secret, CHECKPOINT_NAMESPACE, owner_name, key, str(index)),
        )
    except DomainError as error:  # the whole batch is refused: say which item
        error.details = {**error.details, "item": index}
        raise
    return {
        "index": index,
        "drawer": str(written.drawer.uuid),
        "wing": room.wing.name,
        "room": room.name,
        "destination": str(item.destination),
        "created": written.created,
        "similar": len(written.links),
        "present": True,
    }


def _as_now(result: CheckpointResult) -> CheckpointResult:
    """A replay's first result, each drawer said `present` or not: one deleted since (or its
    import reversed, or merged away and deleted) is no longer stored, whatever the first
    answer said, and an agent replaying must not take it for stored. One query."""
    ids = [outcome["drawer"] for outcome in result["drawers"]]
    present = {str(u) for u in Drawer.objects.filter(uuid__in=ids).values_list("uuid", flat=True)}
    drawers = [
        {**outcome, "present": outcome["drawer"] in present} for outcome in result["drawers"]
    ]
    return {**result, "drawers": drawers}


def _checkpoint_result(key: str, outcomes: list[dict[str, Any]]) -> CheckpointResult:
    return {
        "id": key,
        "items": len(outcomes),
        "stored": sum(o["created"] for o in outcomes),
        "duplicates": sum(not o["created"] for o in outcomes),
        "similar": sum(o["similar"] > 0 for o in outcomes),
        "drawers": outcomes,
    }
