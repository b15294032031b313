"""What is done to stored drawers: similar_to links recorded by hand or by a sweep, supersession
and deletion. Each function owns one transaction; a supersession or a deletion writes its audit
row in it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import groupby
from typing import Any

from django.db import connection, transaction
from django.db.models import Q, Value
from django.utils import timezone

from dedup.errors import Conflict, InvalidInput, NotFound
from dedup.locks import drawer_hold, drawers_locked, rows_held
from dedup.services.config import Actor
from palace.models import (
    AuditAction,
    AuditEntry,
    AuditTarget,
    DistinctPair,
    Drawer,
    DrawerLink,
    Mention,
    Room,
    Wing,
)


def drawer_link(
    *, newer: Drawer, older: Drawer, verdict: str, signals: dict[str, Any]
) -> tuple[DrawerLink, bool]:
    """Record a similar_to link from a newer drawer to an older one. Idempotent: the same pair
    linked again keeps its one link, and a pair is never linked in reverse. Both drawers are held
    until commit (in id order, as every writer takes them), so a DELETE racing the link waits
    for it instead of failing it at commit; a drawer already deleted is NotFound."""
    if newer.pk == older.pk:
        raise InvalidInput("A drawer is never linked to itself.")
    if newer.pk < older.pk:
        newer, older = older, newer
    with transaction.atomic():
        if not drawer_hold(older.pk) or not drawer_hold(newer.pk):
            raise NotFound("A drawer of the pair was deleted.", code="drawer_not_found")
        if DistinctPair.objects.filter(
            **DistinctPair.of(DistinctPair.Kind.DRAWER, older.pk, newer.pk)
        ).exists():
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


def drawer_snapshot(drawer: Drawer) -> dict[str, Any]:
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
        "superseded_by": str(drawer.superseded_by.uuid) if drawer.superseded_by else None,
        "created_at": drawer.created_at.isoformat(),
    }


def drawer_supersede(*, drawer: Drawer, by: Drawer | None = None, actor: Actor = None) -> Drawer:
    """End a drawer's validity, optionally naming the drawer that replaces it. A superseded
    drawer is never a duplicate candidate again, so saying the same thing later is stored.

    Both drawers are locked (by id, the canonical order) and read again before anything is
    judged: a replacement deleted meanwhile is NotFound (never a foreign key failing at commit),
    one superseded meanwhile is a Conflict, so two drawers naming each other never both win."""
    if by is not None and by.pk == drawer.pk:
        raise InvalidInput("A drawer cannot supersede itself.", details={"field": "by"})
    with transaction.atomic():
        held = rows_held(Drawer, [drawer.pk] + ([by.pk] if by is not None else []))
        if drawer.pk not in held:
            raise NotFound("No drawer with that id.", code="drawer_not_found")
        if by is not None and by.pk not in held:
            raise NotFound(
                "The replacing drawer was deleted.",
                code="drawer_not_found",
                details={"field": "by"},
            )
        drawer, by = held[drawer.pk], (held[by.pk] if by is not None else None)
        _check_supersede(drawer, by)
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


def _check_supersede(drawer: Drawer, by: Drawer | None) -> None:
    if drawer.valid_to is not None:
        raise Conflict("The drawer is already superseded.", code="drawer_not_current")
    if by is not None and by.valid_to is not None:
        raise Conflict("The replacing drawer is itself superseded.", code="drawer_not_current")
    if by is not None:
        refuse_across_wings(drawer, by, wings_of_rooms([drawer, by]))


def wings_of_rooms(drawers: Iterable[Drawer]) -> dict[int, str]:
    """The wing of each drawer's room, by room id (one query; none for drawers of one room).
    Rooms of two wings are held until the transaction ends (FOR NO KEY UPDATE, in id order,
    after the drawers: a write into them, which holds a room FOR KEY SHARE, does not wait), so
    a room moved meanwhile (`room_change` holds it FOR UPDATE) is moved before or after the
    supersession, which judges the wings as they are."""
    rooms = {drawer.room_id for drawer in drawers}
    if len(rooms) < 2:
        return dict.fromkeys(rooms, "")  # one room: one wing, whichever it is
    # The rows held alone, their wings read after: a join's row whose room moved meanwhile
    # would be dropped when PostgreSQL checks it again against the wing it joined.
    held = Room.objects.select_for_update(no_key=True).filter(pk__in=rooms).order_by("pk")
    wing_ids = dict(held.values_list("pk", "wing_id"))
    names = dict(Wing.objects.filter(pk__in=wing_ids.values()).values_list("pk", "name"))
    return {room: names[wing] for room, wing in wing_ids.items()}


def refuse_across_wings(drawer: Drawer, by: Drawer, wings: Mapping[int, str]) -> None:
    """A drawer is superseded only by a drawer of its own wing (409 `supersede_across_wings`),
    by every path that supersedes (this service, and an import's supersessions): a key of its
    wing reads the drawer, and would be shown `superseded_by` and `current` naming a drawer it
    may not read, while the fact left its search. `wings`: `wings_of_rooms` of both."""
    wing, by_wing = wings[drawer.room_id], wings[by.room_id]
    if wing == by_wing:
        return
    raise Conflict(
        f"A drawer is superseded only by a drawer of its own wing: this one is in wing {wing!r}, "
        f"the replacing one in wing {by_wing!r} (a key of one wing would be shown an id it "
        f"cannot read). Write the new fact into wing {wing!r} and supersede by that drawer.",
        code="supersede_across_wings",
        details={"field": "by", "wing": wing, "by_wing": by_wing},
    )


def drawer_delete(*, drawer: Drawer, actor: Actor = None) -> None:
    """Delete a drawer and, with it, its links and mentions. The audit row keeps what it held:
    its fields, its links and its mentions (each as an import reversal's row keeps one).

    The drawer is locked before its links and mentions are read, so concurrent deletes of it
    delete it once (the others find it gone: NotFound), and a write linking to it or a mention
    on it (which hold it meanwhile) either commits first, and is deleted with it, or finds it
    gone.

    The other drawers the deletion touches are held too, around it in id order, the canonical
    one (`_around`). The ends of its links, FOR KEY SHARE: two deletions of a link's two ends
    each update the sweep proposal both name twice (its side, then its applied link, set to
    null), so each one's commit checks the proposal's other side, which the other deletion held
    FOR UPDATE: a deadlock. In id order the second deletion waits for the first at the lower of
    the two drawers instead. The drawers it supersedes, FOR NO KEY UPDATE: the deletion sets
    their `superseded_by` to null (SET_NULL), an UPDATE of each; taken after the drawer's own
    lock, that of a lower drawer closed a cycle with a revert of a merge or a decision on the
    pair's link, which hold the lower drawer and then wait for this one (503 database_busy).
    They are read again once the drawer is held: a link or a supersession made while this
    waited for it may add a drawer below it (or one below to update), which is then held first,
    after a rollback of what this held (nothing is written before)."""
    around = _around(drawer)
    for attempt in range(_ATTEMPTS):
        try:
            _delete_holding(drawer, around, actor, last=attempt == _ATTEMPTS - 1)
            return
        except _NewPartners as changed:
            around = changed.around


_ATTEMPTS = 3  # links made to a drawer while its deletion waits: rarely one batch, never three
KEY_SHARE, NO_KEY_UPDATE = "FOR KEY SHARE", "FOR NO KEY UPDATE"


class _NewPartners(Exception):
    """Drawers linked to or superseded by the drawer while its deletion waited for it lead
    below it: hold them first."""

    def __init__(self, around: dict[int, str]) -> None:
        super().__init__(around)
        self.around = around


def _delete_holding(drawer: Drawer, around: dict[int, str], actor: Actor, *, last: bool) -> None:
    with transaction.atomic():
        _hold_in_order({pk: lock for pk, lock in around.items() if pk < drawer.pk})
        locked = (
            Drawer.objects.select_for_update(of=("self",))
            .select_related("room__wing", "superseded_by")
            .filter(pk=drawer.pk)
            .first()
        )
        if locked is None:
            raise NotFound("No drawer with that id.", code="drawer_not_found")
        drawer = locked
        now = _around(drawer)
        if not last and any(
            pk < drawer.pk and around.get(pk) not in (lock, NO_KEY_UPDATE)
            for pk, lock in now.items()
        ):
            raise _NewPartners(now)  # rolled back: the locks taken here are let go
        _hold_in_order({pk: lock for pk, lock in now.items() if pk > drawer.pk})
        _audit_delete(drawer, actor)
        drawer.delete()


# What an audit row keeps of the links and mentions deleted with their drawer (a deletion's, an
# import reversal's), read with these fields: a link by both its sides' ids, a mention by its
# entity's name, as written, and where it came from.
LINK_FIELDS = ("id", "newer__uuid", "older__uuid", "verdict", "similarity")
MENTION_FIELDS = ("entity__name", "observation", "provenance")


def link_kept(link: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": link["id"],
        "newer": str(link["newer__uuid"]),
        "older": str(link["older__uuid"]),
        "verdict": link["verdict"],
        "similarity": link["similarity"],
    }


def mention_kept(mention: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "entity": mention["entity__name"],
        "observation": mention["observation"],
        "provenance": mention["provenance"],
    }


def _audit_delete(drawer: Drawer, actor: Actor) -> None:
    """The deletion's audit row: the drawer as it is, its links and its mentions."""
    held_links = DrawerLink.objects.filter(Q(newer=drawer) | Q(older=drawer)).order_by("id")
    links = [link_kept(link) for link in held_links.values(*LINK_FIELDS)]
    held = Mention.objects.filter(drawer=drawer).order_by("id").values(*MENTION_FIELDS)
    mentions = [mention_kept(mention) for mention in held]
    AuditEntry.objects.record(
        actor=actor,
        action=AuditAction.DRAWER_DELETE,
        target_type=AuditTarget.DRAWER,
        target_id=drawer.uuid,
        before={
            **drawer_snapshot(drawer),
            "links": links,
            "mentions": mentions,
        },
        after=None,
        # The ids of the links deleted with it, as strings, so the console can say what became
        # of a link ("its drawer was deleted") by a text match on one quoted id.
        data={"drawer_links": [str(link["id"]) for link in links]},
    )


def _around(drawer: Drawer) -> dict[int, str]:
    """The other drawers its deletion touches, by id, each with the row lock it is held by: the
    ends of its links (FOR KEY SHARE, as a row that refers to them would be checked at commit)
    and the drawers it supersedes (FOR NO KEY UPDATE, the lock of the UPDATE that sets their
    `superseded_by` to null), in one query. PostgreSQL; none on SQLite, whose writers are
    serial."""
    if connection.vendor != "postgresql":
        return {}
    links = DrawerLink.objects.filter(Q(older=drawer) | Q(newer=drawer)).order_by()
    superseded = Drawer.objects.filter(superseded_by=drawer).order_by()
    rows = links.annotate(updated=Value(False)).values_list("older_id", "newer_id", "updated")
    rows = rows.union(
        superseded.annotate(updated=Value(True)).values_list("pk", "superseded_by", "updated"),
        all=True,
    )
    around: dict[int, str] = {}
    for older, newer, updated in rows:
        for pk in (older, newer):
            if pk != drawer.pk and around.get(pk) != NO_KEY_UPDATE:
                around[pk] = NO_KEY_UPDATE if updated else KEY_SHARE
    return around


def _hold_in_order(locks: Mapping[int, str]) -> None:
    """Hold these drawers, each by its lock, in ascending id: one statement for each run of
    consecutive ids held by the same lock (one, unless both kinds interleave)."""
    for lock, run in groupby(sorted(locks), key=locks.__getitem__):
        drawers_locked(run, lock)
