"""Reversing an import: removing exactly the drawers it created and the links they made.

Later work is left untouched, so a drawer the import created is kept (and reported with the
reasons) when anything outside the import has since come to rest on it:

- a link the import did not make touches it: a drawer written later links to it, or a sweep or a
  person linked it (the later writer's link is its evidence and stays; removing the drawer
  would take that link with it);
- a curator decided one of its links, or said it is not the same as another drawer;
- it was superseded (not by the import itself: a Castellan file's drawer exported superseded is
  superseded again by the import, audited as its own), or supersedes another drawer (outside the
  import);
- a merge consolidated drawers into it;
- a mention the import did not record is on it (see `_mentioned_since`);
- a later write was answered with it (`DrawerRestatement`: an agent wrote the same memory
  again, and was told it is stored);
- a later import counted it as stored (one of its records, `Import.found`): the drawer is handed
  over to that import (the oldest such one not reversed), with the links it made and the mentions
  recorded on it, so reversing that import in turn removes it. So is a drawer kept only because
  drawers of other imports link to it, by links those imports made (a variant another import
  stored, or one handed to it): it goes to the oldest of them, and the store ends as it was
  before once all are reversed, in any order.

Keeping such a drawer loses nothing, and a curator can delete it by hand. Everything else the
import created goes, with the links the import made and the mentions it recorded: one audit row
per drawer (`import.reverse`, holding what it held, its links and its mentions, as a deletion's
row does) and one for the import, all in one transaction and one audit batch. The entities and
aliases the import resolved stay: they belong to the whole store, not to the import's drawers;
the rooms and wings it created go if it leaves them empty (`places`).
A removed drawer's id may be used again: importing the same file again stores it anew. A sweep's
open proposal on a removed drawer loses that side, as for any deletion.

An import is reversed in any state but reversed: a failed one loses what it stored before it
failed; a queued or running one (its worker stopped, or a person cancelling it) stops, writing
nothing after the reversal (`dedup.imports.chunks.hold_running`), and loses what it stored
before.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.db import connection, transaction
from django.db.models import Q, QuerySet

from dedup.errors import Conflict
from dedup.imports.places import PLACES_LEFT, places_removed
from dedup.imports.reversal_report import LISTED, Reversal
from dedup.locks import advisory_lock, room_writes_held
from dedup.services import (
    LINK_FIELDS,
    MENTION_FIELDS,
    drawer_snapshot,
    link_kept,
    mention_kept,
)
from dedup.services.config import Actor
from palace.models import (
    AuditAction,
    AuditEntry,
    AuditTarget,
    DistinctPair,
    Drawer,
    DrawerLink,
    DrawerRestatement,
    Import,
    Mention,
)

DELETE_CHUNK = 500  # ids per DELETE (SQLite bounds a statement's parameters)
LINKED_SINCE = "a later drawer links to it"


def import_reverse(*, imported: Import, actor: Actor = None) -> Reversal:
    """Remove what the import created and has not been built on since; report what is kept.

    The import's row and the rows of the imports that found its drawers (handing one a drawer
    refers to its row) are held first, in id order, its own FOR UPDATE and the others FOR KEY
    SHARE, then the rooms' writes: two reversals of imports that found each other's drawers
    queue instead of deadlocking. A finder that appears meanwhile (its chunk committed before
    the rooms were held) makes the reversal start again, holding it too."""
    finders: set[int] = set()
    for attempt in range(1, FINDER_ATTEMPTS + 1):
        try:
            return _reverse(imported, actor, finders, last=attempt == FINDER_ATTEMPTS)
        except _NewFinders as changed:
            finders = changed.finders
    raise AssertionError("unreachable: the last attempt returns or raises")


FINDER_ATTEMPTS = 3  # a finder appearing while a reversal waits: rarely once, never thrice


class _NewFinders(Exception):
    def __init__(self, finders: set[int]) -> None:
        super().__init__(finders)
        self.finders = finders


def _take_turn() -> None:
    """Reversals take turns, first of all (the canonical order, `dedup.locks`): each decides
    which places it removes knowing those the reversals before it left (`places`). Two at once,
    of imports sharing only a wing, each kept it for the other's room, which the other removed:
    the wing stayed with no room. Reversals are rare, and short beside imports; one that waits
    for its turn past `CASTELLAN_LOCK_TIMEOUT` is refused as busy (503 `database_busy`)."""
    advisory_lock("import reversals")


def _reverse(imported: Import, actor: Actor, finders: set[int], *, last: bool) -> Reversal:
    with transaction.atomic():
        _take_turn()
        finders = finders | _finder_ids(imported)
        _imports_held(imported.pk, finders)
        imported = Import.objects.get(pk=imported.pk)
        if imported.status == Import.Status.REVERSED:
            raise Conflict("The import was reversed already.", code="import_reversed")
        before = imported.status
        # Then the rooms' writes, before the drawers: another import's chunk holds them while it
        # links to these drawers (the canonical order, `dedup.locks`).
        room_writes_held(Drawer.objects.filter(imports=imported))
        drawers = list(
            Drawer.objects.select_for_update(of=("self",))
            .filter(imports=imported)
            .select_related("room__wing", "superseded_by")
            .order_by("id")
        )
        kept = _later_work(imported, drawers)
        heirs = _heirs(imported)
        linked = {pk: heir for pk, heir in _link_heirs(imported, kept).items() if pk not in heirs}
        heir_ids = set(heirs.values()) | set(linked.values())
        if heir_ids - finders and not last:  # one whose row is not held yet
            raise _NewFinders(finders | heir_ids)
        for pk, heir in heirs.items():
            kept.setdefault(pk, []).append(
                f"import {heir} counted it as stored (one of its records): it is that import's now"
            )
        for pk, heir in linked.items():
            kept[pk].append(f"only import {heir}'s drawers link to it: it is that import's now")
        heirs |= linked
        removed = [drawer for drawer in drawers if drawer.pk not in kept]
        links_removed = _remove(imported, removed, actor)
        _hand_over(imported, heirs)
        mentions_removed = _remove_mentions_elsewhere(imported)  # after its drawers went
        places = places_removed(imported, removed, actor, held=drawers)
        reversal = Reversal(
            removed=[str(drawer.uuid) for drawer in removed],
            links_removed=links_removed,
            kept=[{"drawer": str(d.uuid), "reasons": kept[d.pk]} for d in drawers if d.pk in kept],
            mentions_removed=mentions_removed,
            rooms_removed=places.rooms_removed,
            wings_removed=places.wings_removed,
        )
        imported.status = Import.Status.REVERSED
        imported.summary = {**imported.summary, "reversal": reversal.as_dict(listed=LISTED)}
        imported.upload = ""  # a queued import's file: it will not be read now
        imported.options = {**imported.options, PLACES_LEFT: places.left}  # for a later one
        imported.save(update_fields=["status", "summary", "upload", "options"])
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.IMPORT_REVERSE,
            target_type=AuditTarget.IMPORT,
            target_id=imported.pk,
            before={"status": before},
            after={"status": Import.Status.REVERSED},
            data=reversal.as_dict(),
        )
    return reversal


def _later_work(imported: Import, drawers: list[Drawer]) -> dict[int, list[str]]:
    """Why each drawer the import created must stay (those with a reason): what was done to it
    since, outside the import. A few queries for the whole import, not a few per drawer."""
    own = {drawer.pk for drawer in drawers}
    own_ids = _own_ids(imported)
    reasons: dict[int, list[str]] = defaultdict(list)
    for link in _links_of(own_ids).exclude(imports=imported).values("newer_id", "older_id"):
        if link["older_id"] in own and link["newer_id"] not in own:
            reasons[link["older_id"]].append(LINKED_SINCE)
            continue
        for pk in {link["newer_id"], link["older_id"]} & own:
            reasons[pk].append("a link was recorded on it since (by a sweep or by hand)")
    decided = _links_of(own_ids).exclude(status=DrawerLink.Status.OPEN)
    for pk in _either(decided.values_list("newer_id", "older_id"), own):
        reasons[pk].append("a curator decided one of its links")
    distinct = DistinctPair.objects.filter(Q(low_drawer__in=own_ids) | Q(high_drawer__in=own_ids))
    for pk in _either(distinct.values_list("low_drawer_id", "high_drawer_id"), own):
        reasons[pk].append("a curator said it is not the same as another drawer")
    superseded_by_it = _superseded_by(imported)
    for drawer in drawers:
        if drawer.valid_to is None or str(drawer.uuid) in superseded_by_it:
            continue
        if drawer.superseded_by_id not in own:
            reasons[drawer.pk].append("it was superseded")
    superseding = Drawer.objects.filter(superseded_by__in=own_ids).exclude(pk__in=own_ids)
    for pk in set(superseding.values_list("superseded_by_id", flat=True)):
        reasons[pk].append("it supersedes another drawer")
    for drawer in drawers:
        if drawer.consolidation:
            reasons[drawer.pk].append("drawers were merged into it")
    for pk in _mentioned_since(imported, own_ids):
        reasons[pk].append("a mention was recorded on it later")
    for pk in DrawerRestatement.objects.filter(drawer__in=own_ids).values_list("pk", flat=True):
        reasons[pk].append("a later write stated it again (an exact copy)")
    return {pk: list(dict.fromkeys(why)) for pk, why in reasons.items()}


def _own_ids(imported: Import) -> QuerySet[Any]:
    """The ids of the drawers the import created, as a subquery."""
    return Import.drawers.through.objects.filter(import_id=imported.pk).values("drawer_id")


def _found_elsewhere(imported: Import) -> QuerySet[Any]:
    """The rows of the other imports, not reversed, that found one of the import's drawers."""
    return (
        Import.found.through.objects.filter(drawer_id__in=_own_ids(imported))
        .exclude(import_id=imported.pk)
        .exclude(import__status=Import.Status.REVERSED)
    )


def _finder_ids(imported: Import) -> set[int]:
    """The imports a drawer of this one may go to: those that found one, and those whose links
    point at one from a drawer this import did not create (`_link_heirs`)."""
    found = set(_found_elsewhere(imported).values_list("import_id", flat=True))
    own_ids = _own_ids(imported)
    holding = (
        Import.links.through.objects.filter(drawerlink__older__in=own_ids)
        .exclude(drawerlink__newer__in=own_ids)
        .exclude(import_id=imported.pk)
        .exclude(import__status=Import.Status.REVERSED)
    )
    return found | set(holding.values_list("import_id", flat=True))


def _imports_held(own: int, finders: set[int]) -> None:
    """Hold the import's row FOR UPDATE and its finders' FOR KEY SHARE, all in id order (the
    canonical order of import rows; a chunk holds its own import's alone, FOR NO KEY UPDATE)."""
    if connection.vendor != "postgresql":
        return  # SQLite's writers hold the whole database
    with connection.cursor() as cursor:
        for pk in sorted(finders | {own}):
            lock = "FOR UPDATE" if pk == own else "FOR KEY SHARE"
            cursor.execute(f"SELECT id FROM {Import._meta.db_table} WHERE id = %s {lock}", [pk])


def _heirs(imported: Import) -> dict[int, int]:
    """The import each of the import's drawers goes to instead of being removed: the oldest
    other import, not reversed, whose records found it stored."""
    heirs: dict[int, int] = {}
    found = _found_elsewhere(imported).order_by("import_id").values_list("drawer_id", "import_id")
    for drawer, heir in found:
        heirs.setdefault(drawer, heir)
    return heirs


def _link_heirs(imported: Import, kept: dict[int, list[str]]) -> dict[int, int]:
    """The import each drawer kept only because later drawers link to it goes to: the oldest
    import, not reversed, holding those links, if every one is an import's (a write's or a
    sweep's link keeps the drawer for good). Reversing that import removes the drawer with its
    own, as nothing it did not make rests on it: the store ends as before all of them."""
    only_linked = [pk for pk, why in kept.items() if why == [LINKED_SINCE]]
    if not only_linked:
        return {}
    own_ids = _own_ids(imported)
    links = dict(
        DrawerLink.objects.filter(older__in=only_linked)
        .exclude(newer__in=own_ids)
        .values_list("id", "older_id")
    )
    holders: dict[int, int] = {}
    held = Import.links.through.objects.filter(drawerlink_id__in=list(links))
    held = held.exclude(import_id=imported.pk).exclude(import__status=Import.Status.REVERSED)
    for link, holder in held.order_by("import_id").values_list("drawerlink_id", "import_id"):
        holders.setdefault(link, holder)
    heirs: dict[int, int] = {}
    unheld = {older for link, older in links.items() if link not in holders}
    for link, older in links.items():
        if older not in unheld:
            heirs[older] = min(heirs.get(older, holders[link]), holders[link])
    return heirs


def _hand_over(imported: Import, heirs: dict[int, int]) -> None:
    """Make each heir's drawer its own: the drawer, the links it made and the mentions the
    reversed import recorded on it move to the heir's record, which no longer counts it found."""
    by_heir: dict[int, list[int]] = defaultdict(list)
    for drawer, heir in heirs.items():
        by_heir[heir].append(drawer)
    held = (
        (Import.drawers.through, "drawer_id__in"),
        (Import.links.through, "drawerlink__newer_id__in"),
        (Import.mentions.through, "mention__drawer_id__in"),
    )
    for heir, drawers in by_heir.items():
        for start in range(0, len(drawers), DELETE_CHUNK):
            chunk = drawers[start : start + DELETE_CHUNK]
            Import.found.through.objects.filter(import_id=heir, drawer_id__in=chunk).delete()
            for model, on_drawer in held:
                # An UPDATE of the import's own rows: the heir holds none of them yet (it found
                # the drawer, so it neither created it nor made its links nor recorded on it).
                model.objects.filter(import_id=imported.pk, **{on_drawer: chunk}).update(
                    import_id=heir
                )


def _superseded_by(imported: Import) -> set[str]:
    """The ids of the drawers the import superseded itself (a Castellan file's drawer exported
    superseded): each audited as the import's (`supersessions.apply_supersessions`), and,
    once superseded, never current again to be superseded by anyone else. Imports made before they
    audited their supersessions have none: a drawer of theirs superseded by a drawer they did
    not create is kept, as one superseded since would be."""
    entries = AuditEntry.objects.filter(
        action=AuditAction.DRAWER_SUPERSEDE,
        target_type=AuditTarget.DRAWER,
        data__import=imported.pk,
    )
    return set(entries.values_list("target_id", flat=True))


def _mentioned_since(imported: Import, own_ids: QuerySet[Any]) -> set[int]:
    """The drawers holding a mention the import did not record (only a Castellan file's lines
    record any). An import made before imports recorded their mentions: those after it finished,
    or, if it did not finish, every one (a drawer kept wrongly costs a curator a deletion; one
    removed wrongly loses an agent's mention)."""
    mentions = Mention.objects.filter(drawer__in=own_ids).exclude(imports=imported)
    if imported.options.get("mentions_unrecorded") and imported.finished_at:
        mentions = mentions.filter(created_at__gt=imported.finished_at)
    return set(mentions.values_list("drawer_id", flat=True))


def _remove_mentions_elsewhere(imported: Import) -> list[dict[str, Any]]:
    """Delete the mentions the import recorded on drawers it did not create (a Castellan file's
    mention of a drawer stored before); the import's audit row keeps what each held. Those on
    its own drawers went with them, or stay with a drawer kept whole."""
    mentions = Mention.objects.filter(imports=imported).exclude(drawer__imports=imported)
    held = list(mentions.order_by("id").values("id", "drawer__uuid", *MENTION_FIELDS))
    ids = [mention["id"] for mention in held]
    for start in range(0, len(ids), DELETE_CHUNK):
        Mention.objects.filter(pk__in=ids[start : start + DELETE_CHUNK]).delete()
    return [{"drawer": str(mention["drawer__uuid"]), **mention_kept(mention)} for mention in held]


def _links_of(drawer_ids: QuerySet[Any]) -> QuerySet[DrawerLink]:
    return DrawerLink.objects.filter(Q(newer__in=drawer_ids) | Q(older__in=drawer_ids))


def _either(pairs: Iterable[tuple[int | None, int | None]], own: set[int]) -> set[int]:
    return {pk for pair in pairs for pk in pair if pk is not None and pk in own}


def _remove(imported: Import, drawers: list[Drawer], actor: Actor) -> int:
    """Delete the drawers (their links and mentions go with them), each audited with what it
    held; returns how many links went."""
    batch = uuid.uuid4()
    removed = {drawer.pk for drawer in drawers}
    links, mentions = _held(removed)
    for drawer in drawers:
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.IMPORT_REVERSE,
            target_type=AuditTarget.DRAWER,
            target_id=drawer.uuid,
            before={
                **drawer_snapshot(drawer),
                "links": links.get(drawer.pk, []),
                "mentions": mentions.get(drawer.pk, []),
            },
            after=None,
            data={"import": imported.pk},
            batch=batch,
        )
    ids = sorted(removed)
    for start in range(0, len(ids), DELETE_CHUNK):
        Drawer.objects.filter(pk__in=ids[start : start + DELETE_CHUNK]).delete()
    return len({link["id"] for held in links.values() for link in held})


def _held(removed: set[int]) -> tuple[dict[int, list[dict[str, Any]]], dict[int, list[Any]]]:
    """The links and mentions of the drawers about to be removed, by drawer, as their audit rows
    keep them."""
    links: dict[int, list[dict[str, Any]]] = defaultdict(list)
    mentions: dict[int, list[Any]] = defaultdict(list)
    ids = sorted(removed)
    for start in range(0, len(ids), DELETE_CHUNK):
        chunk = ids[start : start + DELETE_CHUNK]
        for link in DrawerLink.objects.filter(Q(newer__in=chunk) | Q(older__in=chunk)).values(
            "newer_id", "older_id", *LINK_FIELDS
        ):
            row = link_kept(link)
            for pk in {link["newer_id"], link["older_id"]} & removed:
                links[pk].append(row)
        for mention in Mention.objects.filter(drawer__in=chunk).values(
            "drawer_id", *MENTION_FIELDS
        ):
            mentions[mention["drawer_id"]].append(mention_kept(mention))
    return links, mentions
