"""The supersessions a Castellan file holds (`valid_to`, `superseded_by`), applied once an
import has written every drawer (`dedup.imports.run`)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import NamedTuple

from django.db import transaction
from django.utils import timezone

from dedup.errors import Conflict
from dedup.imports import formats
from dedup.imports.chunks import Supersession, Tally, hold_running
from dedup.imports.ids import FileDrawers
from dedup.locks import rows_held
from dedup.services import refuse_across_wings, wings_of_rooms
from palace.models import AuditAction, AuditEntry, AuditTarget, Drawer, Import


@transaction.atomic
def apply_supersessions(
    imported: Import,
    supersessions: list[Supersession],
    file_drawers: FileDrawers,
    tally: Tally,
) -> None:
    """A Castellan drawer exported as superseded is superseded again, as it was, by the drawer
    it named (the one holding that record of the file, or one an earlier import stored under
    that id: `FileDrawers`), once every drawer is written. Each supersession is audited as the
    import's (`drawer.supersede`, its data naming the import): the import's reversal tells its
    own supersessions from later work by these rows. A drawer someone else superseded meanwhile
    (after its chunk, before this) is left as they made it, and not recorded as the import's.
    A supersession `drawer_supersede` would refuse is reported malformed with its line: a drawer
    naming a successor found nowhere, one naming itself, one whose successor was deleted
    meanwhile, or one of another wing (its rule, `refuse_across_wings`); so is one closing a
    cycle (its successor superseded, through the file's chain, by it), which would leave no
    drawer of the cycle current. A chain is history (A by B, B by C), taken in any order."""
    hold_running(imported)
    planned = []
    for supersession in supersessions:
        by_id = supersession.data.get("superseded_by")
        by = file_drawers.named(str(by_id)).first() if by_id else None
        when = formats.parse_when(supersession.data.get("valid_to")) or timezone.now()
        planned.append((supersession, by, when))
    # Held up front, in id order with their successors, as `drawer_supersede` holds a pair:
    # updated in the file's order, two of them could wait on a supersession holding them in id
    # order, each on the other.
    superseded = Drawer.objects.filter(uuid__in=[s.drawer_id for s, _, _ in planned])
    held = rows_held(
        Drawer, [*superseded.values_list("pk", flat=True), *(b.pk for _, b, _ in planned if b)]
    )
    found = Found(held, {d.uuid: d for d in held.values()}, wings_of_rooms(held.values()))
    successors: dict[uuid.UUID, uuid.UUID] = {}  # the chain this import makes
    for supersession, by, valid_to in planned:
        drawer_id = supersession.drawer_id
        named = supersession.data.get("superseded_by")
        refusal = _refused_supersession(drawer_id, named, by, found, successors)
        if refusal:
            tally.malformed(formats.Malformed(supersession.file, supersession.line, refusal))
            continue
        if not Drawer.objects.filter(uuid=drawer_id, valid_to__isnull=True).update(
            valid_to=valid_to, superseded_by=by
        ):
            continue
        if by is not None:
            successors[drawer_id] = by.uuid
        AuditEntry.objects.record(
            actor=imported.created_by,
            action=AuditAction.DRAWER_SUPERSEDE,
            target_type=AuditTarget.DRAWER,
            target_id=drawer_id,
            before={"valid_to": None, "superseded_by": None},
            after={
                "valid_to": valid_to.isoformat(),
                "superseded_by": str(by.uuid) if by else None,
            },
            data={"import": imported.pk},
        )


class Found(NamedTuple):
    """The drawers an import's supersessions hold: by id, by public id, and their rooms' wings."""

    held: Mapping[int, Drawer]
    by_uuid: Mapping[uuid.UUID, Drawer]
    wings: Mapping[int, str]


def _refused_supersession(
    drawer_id: uuid.UUID,
    named: object,
    by: Drawer | None,
    found: Found,
    successors: Mapping[uuid.UUID, uuid.UUID],
) -> str:
    """Why the import does not supersede this drawer by `by`, the drawer its line's
    `superseded_by` (`named`) names (`apply_supersessions`), or "". A line naming no successor
    ends its drawer alone; one naming a drawer found nowhere leaves it current, as any refused
    supersession does (it had ended the drawer, with no successor and no word)."""
    if by is None and named:
        return (
            f"superseded_by names {str(named)[:100]!r}, which no drawer holds now (none of this "
            "file, nor one an import stored under that id; or it was deleted meanwhile): the "
            "drawer is left current."
        )
    if by is None:
        return ""
    if by.uuid == drawer_id:
        return "A drawer cannot supersede itself (superseded_by names the drawer's own id)."
    if by.pk not in found.held:
        return "The replacing drawer was deleted."
    drawer = found.by_uuid.get(drawer_id)
    try:
        if drawer is not None:  # else deleted meanwhile: nothing is superseded
            refuse_across_wings(drawer, by, found.wings)
    except Conflict as refused:
        return refused.message
    seen, step = set(), by.uuid
    while step in successors and step not in seen:
        seen.add(step)
        step = successors[step]
        if step == drawer_id:
            return (
                f"The replacing drawer {by.uuid} is superseded, through this file, by this "
                "drawer: a cycle would leave none of them current."
            )
    return ""
