"""Serialise writers that could race on the same row.

PostgreSQL: a transaction-scoped advisory lock on a key derived from what is being written, and
a row lock on a drawer that a new row is about to refer to. SQLite: nothing to do here, because
the connection opens every transaction IMMEDIATE, which takes the database's write lock before
the first read.

The canonical order, so that two requests never wait on each other in a cycle: the reversals' turn
(one key, which an import's reversal takes first: `dedup.imports.reverse`); then import rows, by id
(a chunk holds its own import's, FOR NO KEY UPDATE; a reversal its own, FOR UPDATE, with those of
the imports that found its drawers, FOR KEY SHARE, `dedup.imports`); then a checkpoint's id; then
the wings, then the rooms a request creates on first use; then the drawer names; then the rooms'
writes (`room_writes`), or an entity's key; each kind by sorted key; then the key bands of an
entity about to be created (`creations_meanwhile`, by length; or of those an undo makes current
again, `bands_counted`, all in one statement; a transaction creates one entity at most, or writes
alone, as `seed_demo` before anyone else: holding bands, it would wait on another name's lock whose
holder waits on the bands); then row locks on drawers (or entities), by id; then a sweep's
proposals, by id (its apply and reverse, and a revert of a judgement,
`review.services.sweep_locks`, `reverts._hold`); then row locks on what they lead to, their links
(similar_to and possibly_same_as), by id. A request that needs more than one lock of a kind takes
them all up front (`hold_locks`, `rows_held`); one past a lock's place in the order only tries it
(`lock_taken`: an import's reversal, removing a wing it made).

A login's name (`dedup.user_names`, on its reading form) is a lock of its own: a transaction
that takes it takes no other, so it has no place in the order.

Drawers before links: a DELETE holds its drawer and then deletes the drawer's links, so a
request that starts from a link (a decision, its revert, a cluster's decision) reads the link
unlocked to learn its sides, holds the sides, then locks the link and judges it again (a link's
sides never change: if it is gone, a side was deleted or a decision removed it). `link_held`
does the three steps in one statement. A revert first locks the audit rows of the decisions it
undoes (by id; nothing else locks an audit row), then the writes of the rooms of the drawers it
makes current again, then the key bands of the entities it makes current again, then the
drawers and entities, then the links.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TypeVar

from django.db import connection, models
from django.db.models import QuerySet

from palace.models import Drawer, EntityKeyBand

Row = TypeVar("Row", bound=models.Model)


def lock_key(*parts: object) -> int:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def room_writes(room_id: int) -> int:
    """The key writers of drawers into a room queue on: one at a time, each writer's candidates
    are read after the one before it committed, so two near variants written at once are linked
    as if written one after the other (and two exact copies store one). It was one lock per text,
    which let near variants pass each other unlinked (58 of 150 pairs in a race test). Writes to
    other rooms do not wait; on SQLite every writer waits anyway."""
    return lock_key("drawer", room_id)


def advisory_lock(*parts: object) -> None:
    """Block until no other transaction holds the same key; released at commit or rollback."""
    hold_lock(lock_key(*parts))


def hold_lock(key: int) -> None:
    """`advisory_lock` by a key `lock_key` already made."""
    if connection.vendor != "postgresql":
        return
    if not connection.in_atomic_block:  # pragma: no cover - a programming error
        raise RuntimeError("advisory_lock() must be called inside a transaction.")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def hold_locks(keys: Iterable[int]) -> None:
    """`hold_lock` on every key, in sorted order, in one round trip."""
    ordered = sorted(set(keys))
    if connection.vendor != "postgresql" or not ordered:
        return
    if not connection.in_atomic_block:  # pragma: no cover - a programming error
        raise RuntimeError("hold_locks() must be called inside a transaction.")
    with connection.cursor() as cursor:
        # unnest yields the array in its order, so the locks are taken in that order.
        cursor.execute("SELECT pg_advisory_xact_lock(k) FROM unnest(%s::bigint[]) AS k", [ordered])


def lock_taken(key: int) -> bool:
    """Take the lock if no one holds it, without waiting: False when another transaction does.
    For a caller past the lock's place in the canonical order, which may not wait on it (a
    reversal holding rooms' writes, which would remove a wing only if no one is creating a room
    in it). On SQLite, whose writers are serial, always taken."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [key])
        (taken,) = cursor.fetchone()
    return bool(taken)


def drawer_held(drawer_id: int) -> Drawer | None:
    """The drawer, held until commit so that no one deletes it while a row that refers to it is
    written (a deferred foreign key would otherwise fail at commit); None if it is gone. FOR KEY
    SHARE is the weakest row lock a DELETE waits for: readers and other holders never queue."""
    if connection.vendor != "postgresql":
        return Drawer.objects.filter(pk=drawer_id).first()
    table = Drawer._meta.db_table
    held = Drawer.objects.raw(f"SELECT * FROM {table} WHERE id = %s FOR KEY SHARE", [drawer_id])
    return next(iter(held), None)


def drawer_hold(drawer_id: int) -> bool:
    """`drawer_held` for a caller that has the drawer already: the same lock, without reading the
    row back (one hand-written statement); False if the drawer is gone."""
    lock = " FOR KEY SHARE" if connection.vendor == "postgresql" else ""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {Drawer._meta.db_table} WHERE id = %s{lock}", [drawer_id])
        return cursor.fetchone() is not None


def drawers_locked(
    ids: Iterable[int], lock: str = "FOR KEY SHARE", *, current_or: Iterable[int] | None = None
) -> set[int]:
    """Those of these drawers still there, locked (`lock`: FOR KEY SHARE, as a row that refers
    to them would, or FOR NO KEY UPDATE) in ascending id, in one statement; with `current_or`,
    only the current ones and those it names. PostgreSQL only (none on SQLite, whose writers are
    serial)."""
    ordered = sorted(set(ids))
    if connection.vendor != "postgresql" or not ordered:
        return set()
    # ORDER BY under the row lock: PostgreSQL sorts, then locks the rows in that order.
    # `= ANY(array)` keeps it one parameter however many drawers are named.
    current = "" if current_or is None else " AND (valid_to IS NULL OR id = ANY(%s::bigint[]))"
    params = [ordered] if current_or is None else [ordered, sorted(set(current_or))]
    sql = f"SELECT id FROM {Drawer._meta.db_table} WHERE id = ANY(%s::bigint[]){current}"
    with connection.cursor() as cursor:
        cursor.execute(f"{sql} ORDER BY id {lock}", params)
        return {pk for (pk,) in cursor.fetchall()}


def room_writes_held(drawers: QuerySet[Drawer]) -> None:
    """`room_writes` of these drawers' rooms, in sorted order, for a caller that may make one
    current again (`make_current` takes that lock after it holds the drawer, which is then a
    lock already held, not a wait in the wrong order)."""
    if connection.vendor != "postgresql":
        return
    hold_locks(room_writes(room) for room in drawers.values_list("room_id", flat=True).distinct())


def rows_held(model: type[Row], ids: Iterable[int]) -> dict[int, Row]:
    """These rows, read and locked FOR NO KEY UPDATE in ascending id (the canonical order), by
    id; a row deleted already is missing. PostgreSQL locks the rows as the sorted scan emits
    them, so two requests holding overlapping sets queue instead of each holding what the other
    waits for. NO KEY: the holder changes no key (it never deletes these rows), and the
    foreign-key checks another transaction runs at its commit (FOR KEY SHARE, on a row a
    deletion updated twice, as Django's SET NULLs do) then pass instead of waiting on it, which
    had closed a cycle with a drawer's deletion."""
    held = model._default_manager.select_for_update(of=("self",), no_key=True)
    return {row.pk: row for row in held.filter(pk__in=sorted(set(ids))).order_by("pk")}


def link_held(model: type[Row], pk: int, *, sides: type[models.Model]) -> Row | None:
    """The link, locked after its two sides (drawers or entities, FOR NO KEY UPDATE, by id: the
    canonical order, the one a DELETE takes them in); None if it is gone or a side is (deleted
    meanwhile: the link goes with it). One statement: PostgreSQL runs the filter's sub-select,
    which locks the sides, before the outer FOR UPDATE locks the link, and judges the link again
    as it is once it has waited. SQLite: a plain read (its transactions hold the database)."""
    if connection.vendor != "postgresql":
        return model._default_manager.filter(pk=pk).first()
    link, side = model._meta.db_table, sides._meta.db_table
    held = (
        f"SELECT s.id FROM {side} s WHERE s.id IN ({link}.older_id, {link}.newer_id) "
        "ORDER BY s.id FOR NO KEY UPDATE OF s"
    )
    sql = f"SELECT * FROM {link} WHERE id = %s AND (SELECT count(*) FROM ({held}) h) = 2 "
    return next(iter(model._default_manager.raw(sql + f"FOR UPDATE OF {link}", [pk])), None)


def creations_meanwhile(key_length: int, seen: dict[int, int]) -> bool:
    """Count the creation of an entity whose key has `key_length` characters in the bands it
    moves (`palace.EntityKeyBand`: this length and the two above), holding their rows until
    commit, and say whether another writer created an entity in them since `seen` (the counts
    the lookup read before it looked: `dedup.candidates.NameLookup.bands`).

    Two names within two edits have keys within two characters of length, so their writers
    share a band: whichever counts second waits here for the other's commit and finds a count
    moved, and its resolution looks again (which now sees that entity) before it creates one.
    Before this, each writer's lookup ran before the other committed and both created: four
    typo spellings of one name written at once made four entities. One statement, the rows in
    ascending length (one made by the first creation that needs it). PostgreSQL only: SQLite's
    writers are serial."""
    if connection.vendor != "postgresql":
        return False
    counts = bands_counted([key_length])
    return any(count != seen.get(length, 0) + 1 for length, count in counts.items())


def bands_counted(key_lengths: Iterable[int]) -> dict[int, int]:
    """Count a creation of a key of each of these lengths in the bands it moves (the length and
    the two above), holding their rows until commit, in one statement, the rows in ascending
    length; each band's count after. `creations_meanwhile` for one new entity; an undo that
    makes entities current again (`dedup.services.entity_relinks`) counts them so too, before
    it holds their rows. PostgreSQL only: nothing is counted on SQLite."""
    bands = sorted({length + step for length in key_lengths for step in range(3)})
    if connection.vendor != "postgresql" or not bands:
        return {}
    table = EntityKeyBand._meta.db_table
    with connection.cursor() as cursor:
        # INSERT ... SELECT ... ORDER BY: the rows are inserted, or their conflict updated (and
        # locked), in that order, so two counts of overlapping bands queue instead of crossing.
        cursor.execute(
            f"INSERT INTO {table} (length, created) "
            "SELECT band, 1 FROM unnest(%s::int[]) AS band ORDER BY band "
            f"ON CONFLICT (length) DO UPDATE SET created = {table}.created + 1 "
            "RETURNING length, created",
            [bands],
        )
        return dict(cursor.fetchall())
