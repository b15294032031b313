"""Reverting decisions to the exact prior state. A revert is itself audited ("review.revert",
target the decision), so the log stays append-only and "reverted" is read from it rather than
written into it."""

from __future__ import annotations

import json
import uuid
from typing import Any, cast

from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet, TextField
from django.db.models.fields.json import KeyTransform
from django.db.models.functions import Cast

from dedup.errors import DomainError, NotFound
from dedup.locks import room_writes_held, rows_held
from dedup.services import current_again_counted, entity_relinked
from palace.models import DECISION_PREFIX, AuditAction, AuditEntry, AuditTarget, Drawer, Entity
from review.items import (
    REVERT_ACTION,
    Action,
    AlreadyDecided,
    ItemKind,
    ItemRef,
    RevertBlocked,
    check_note,
)
from review.models import Proposal
from review.selectors.audit import not_reverted, redirect_windows
from review.services.actions import ACTIONS, target_deleted

SIDES = ("older", "newer")  # the order of a link's `touches`
NARROWED_TOUCHES = 100  # touched objects a dependents' query names itself (`_batch_dependents`)
TOUCHED_MODELS: dict[str, type[Drawer] | type[Entity]] = {"drawer": Drawer, "entity": Entity}


def reverts_of(entry: AuditEntry) -> AuditEntry | None:
    return AuditEntry.objects.filter(reverts=entry).first()


def dependents(entry: AuditEntry) -> list[AuditEntry]:
    """Later decisions, not reverted, that touched any object this one touched."""
    return _batch_dependents([entry])


def _lock(pks: list[int]) -> None:
    """Lock these audit rows, in one canonical order (ascending id): racing reverts of the same
    decisions queue here, and each judges the state the one before it left."""
    locked = AuditEntry.objects.select_for_update().filter(pk__in=pks).order_by("pk")
    list(locked.values_list("pk", flat=True))


def hold_decisions(entries: list[AuditEntry]) -> list[AuditEntry]:
    """Lock these decisions' audit rows and those of the later decisions outside them that
    depend on them (returned, for `revert_held`), in ascending id, for a caller that reverts
    them after holding what they touched (a sweep's reverse): a revert takes the audit rows
    before the rooms and the drawers, so must it. The later decisions are read once for them
    all here, and once more by `revert_held` when what they touch is held (a read per decision,
    three with each revert's own, had made a sweep's reverse quadratic: 50 s for 400 merges)."""
    guessed = _batch_dependents(entries) if entries else []
    _lock(sorted({entry.pk for entry in entries} | {e.pk for e in guessed}))
    return guessed


def revert_held(
    entries: list[AuditEntry], guessed: list[AuditEntry], *, actor: Any
) -> list[AuditEntry]:
    """Revert these decisions together, newest first, each revert row in its decision's batch:
    for a caller that held them (`hold_decisions`, which gave `guessed`) and then what they
    touch in the canonical order (a sweep's reverse, whose own merges may depend on each other:
    a drawer merged into by two applications). A later decision outside them that touched what
    they touched blocks them all. A refusal's `details` name the decision it is about
    (`decision`), so the caller can say which of its own."""
    _hold([*entries, *guessed])
    later = _batch_dependents(entries) if entries else []
    if later:
        touched = set(later[0].data.get("touches", []))
        first = next(e for e in entries if touched & set(e.data.get("touches", [])))
        raise RevertBlocked(
            "Later decisions depend on this one: revert them first, or revert them together.",
            details={"depends_on_this": [e.pk for e in later], "decision": first.pk},
        )
    reverted = []
    for entry in sorted(entries, key=lambda e: e.pk, reverse=True):
        try:
            reverted.append(_revert_one(entry, actor, "", entry.batch))
        except DomainError as error:
            error.details = {**error.details, "decision": entry.pk}
            raise
    return reverted


def _decisions() -> QuerySet[AuditEntry]:
    return AuditEntry.objects.filter(action__startswith=DECISION_PREFIX).exclude(
        action=REVERT_ACTION
    )


def check_decision_known(decision: int) -> None:
    """404 `decision_not_found` for an id that is no decision, read before a request's body (the
    revert checks again, holding the row)."""
    if _decisions().filter(pk=decision).exists():
        return
    entry = AuditEntry.objects.filter(pk=decision).first()
    message = "No decision with that id." if entry is None else not_a_decision(entry)
    raise NotFound(message, code="decision_not_found")


def not_a_decision(entry: AuditEntry) -> str:
    """Why an audit row that is no curator's decision (a revert, a write, the demo's seed) is
    not reverted: "No decision with that id." had denied the row the log shows."""
    if entry.action == REVERT_ACTION:
        return f"#{entry.pk} is a revert, which is not reverted: decide the item again instead."
    return f"#{entry.pk} is not a curator's decision ({entry.action}): only decisions are reverted."


def check_batch_known(batch: uuid.UUID) -> None:
    """404 `decision_not_found` for a batch that holds no audit row, read before the body."""
    if not AuditEntry.objects.filter(batch=batch).exists():
        raise _no_batch_decision()


def _no_batch_decision() -> NotFound:
    return NotFound("No decision in that batch.", code="decision_not_found")


def _batch_reverted() -> AlreadyDecided:
    """A batch reverted already (a retry, or a second click), refused as a decision's revert is."""
    return AlreadyDecided(
        "Every decision of this batch is already reverted.", code="already_reverted"
    )


def _decision(decision: int | AuditEntry) -> AuditEntry:
    """The decision, locked, if it exists and is not reverted yet."""
    pk = decision.pk if isinstance(decision, AuditEntry) else decision
    entry = AuditEntry.objects.select_for_update().filter(pk=pk).first()
    if entry is None:
        raise NotFound("No decision with that id.", code="decision_not_found")
    if not entry.action.startswith(DECISION_PREFIX) or entry.action == REVERT_ACTION:
        raise NotFound(not_a_decision(entry), code="decision_not_found")
    done = reverts_of(entry)
    if done is not None:
        raise AlreadyDecided(
            f"{done.actor_label} already reverted this decision "
            f"on {done.created_at:%Y-%m-%d at %H:%M} UTC.",
            code="already_reverted",
        )
    return entry


def revert(
    *,
    decision: int | AuditEntry,
    actor: Any,
    cascade: bool = False,
    note: str = "",
) -> list[AuditEntry]:
    """Undo a decision, restoring the exact prior state. If later decisions touched the same
    objects, refuse and name them, or (cascade) revert them too, newest first. A drawer merge
    one of whose drawers was deleted since is reverted as far as it can be
    (`MergeDrawers.restore_without_link`), its revert row saying what was not restored, instead
    of refused: one deletion would otherwise block for good every merge into the same drawer
    before it, each depending on the next.

    The later decisions are judged once what they touched is held (`_hold`): a decision on the
    same drawers committed meanwhile is seen (and blocks, or is reverted with it), and one not
    committed yet waits for this revert and then judges the state it left. A note is checked as
    a decision's (`check_note`)."""
    check_note(note)
    with transaction.atomic():
        entry = _decision(decision)
        guessed = dependents(entry)
        _lock([e.pk for e in guessed])  # their ids are all above this one's
        _hold([entry, *guessed])
        later = dependents(entry)  # judged again, now that what they touch is held
        if later and not cascade:
            raise RevertBlocked(
                "Later decisions depend on this one: revert them first, or revert them together.",
                details={"depends_on_this": [e.pk for e in later]},
            )
        _refuse_unheld(later, guessed)
        batch = uuid.uuid4() if later else entry.batch
        reverted = [_revert_one(e, actor, note, batch) for e in reversed(later)]
        reverted.append(_revert_one(entry, actor, note, batch))
    return reverted


def _hold(entries: list[AuditEntry]) -> None:
    """Hold what undoing these decisions writes, in the canonical order (dedup/locks.py), before
    the later decisions are judged and before any link is locked: the rooms of the drawers a
    merge's undo makes current (`make_current` takes the write path's room lock), then every
    touched drawer and entity by id, then every judged proposal by id (as a sweep's apply and
    reverse hold drawers, then proposals: a revert of a verdict judges the proposal as the apply
    left it). The undo locks the link itself, after them, as a DELETE does; a side deleted
    before is missing for good, which `_check_sides` then says."""
    touched: dict[str, set[int]] = {kind: set() for kind in (*TOUCHED_MODELS, "proposal")}
    merged_away = []
    for entry in entries:
        for kind, _, pk in (t.partition(":") for t in entry.data.get("touches", [])):
            if kind in touched:
                touched[kind].add(int(pk))
        other = (entry.before or {}).get("other")
        if ItemRef.parse(entry.data["item"]).is_drawer and other:
            merged_away.append(other["id"])
    room_writes_held(Drawer.objects.filter(pk__in=merged_away))
    current_again_counted([pk for entry in entries if (pk := _current_again(entry))])
    for kind, model in TOUCHED_MODELS.items():
        rows_held(model, touched[kind])
    rows_held(Proposal, touched["proposal"])


def _current_again(entry: AuditEntry) -> int | None:
    """The entity undoing this decision makes answer for itself again (an alias or a merge of
    one entity link's side into the other), if any."""
    other = (entry.before or {}).get("other")
    ref = ItemRef.parse(entry.data["item"])
    redirect = entry.action.removeprefix(DECISION_PREFIX) in (Action.ADD_ALIAS, Action.MERGE)
    return other["id"] if ref.kind is ItemKind.ENTITY and redirect and other else None


def _refuse_unheld(later: list[AuditEntry], guessed: list[AuditEntry]) -> None:
    """A cascade reverts only decisions whose objects it holds: one that landed between the
    first look and the locks (rare) is named, and the curator reverts again."""
    landed = sorted({e.pk for e in later} - {e.pk for e in guessed})
    if landed:
        raise RevertBlocked(
            "Other decisions on these objects landed while this revert was prepared: "
            "look at them and revert again.",
            details={"depends_on_this": [e.pk for e in later], "landed": landed},
        )


def _revert_one(entry: AuditEntry, actor: Any, note: str, batch: uuid.UUID | None) -> AuditEntry:
    ref = ItemRef.parse(entry.data["item"])
    action = Action(entry.action.removeprefix(DECISION_PREFIX))
    _check_sides(entry, ref, action)
    try:
        # A decision's entry records both states.
        before, after = cast(dict, entry.before), cast(dict, entry.after)
        not_restored = ACTIONS[ref.kind][action].undo(ref, before=before, after=after)
    except IntegrityError as error:
        raise RevertBlocked(
            "Restoring the prior state would clash with what was written since "
            "(for example a drawer now holding the same name).",
        ) from error
    current_again = _current_again(entry)
    relinked = entity_relinked(current_again, redirect_windows) if current_again else []
    linked = [link.pk for link in relinked]
    return AuditEntry.objects.record(
        actor=actor,
        action=AuditAction.REVIEW_REVERT,
        target_type=AuditTarget.DECISION,
        target_id=entry.pk,
        before=entry.after,
        after=entry.before,
        data={
            "item": str(ref),
            "reverts": entry.pk,
            "reverted_action": str(action),
            "note": note,
            **({"not_restored": not_restored} if not_restored else {}),
            # Links to entities one of which never saw the other (`entity_relinked`).
            **({"linked": linked} if linked else {}),
        },
        batch=batch,
        reverts=entry,
    )


def _check_sides(entry: AuditEntry, ref: ItemRef, action: Action) -> None:
    """Refuse to revert a decision on a link one of whose sides was deleted since (the link went
    with it), naming the side and the drawer or entity (its id, in `details` too). A drawer
    merge one of whose drawers was deleted is revertible in part (`restore_without_link`): the
    kept drawer deleted, its undo makes the merged-away drawer current again; the merged-away
    drawer deleted, it gives the kept drawer back its provenance as before the merge."""
    if ref.is_proposal:
        return
    gone = []
    for side, touched in zip(SIDES, entry.data.get("touches", []), strict=False):
        kind, _, pk = touched.partition(":")
        if not TOUCHED_MODELS[kind].objects.filter(pk=int(pk)).exists():
            gone.append((side, kind, int(pk)))
    if not gone:
        return
    merge = ref.is_drawer and action is Action.MERGE
    kept = (entry.before or {}).get("canonical") if merge else None
    if kept:
        return
    side, kind, pk = gone[0]
    raise target_deleted(
        f"The {side} {kind} of this item",
        which=f"{kind} {pk}",
        details={"item": str(ref), "side": side, kind: pk},
    )


def last_own_decision(actor: Any) -> AuditEntry | None:
    """The curator's latest decision that is not reverted yet (for "undo")."""
    own = AuditEntry.objects.filter(actor=actor, action__startswith=DECISION_PREFIX).exclude(
        action=REVERT_ACTION
    )
    return not_reverted(own).order_by("-pk").first()


# --- a whole batch (a cluster's decision, a bulk decision) -----------------------------------


def revert_batch(
    *, batch: uuid.UUID, actor: Any, cascade: bool = False, note: str = ""
) -> list[AuditEntry]:
    """Undo every decision of a batch (a cluster's decision, a bulk decision, an alias with the
    pairs it settled) not reverted yet, newest first, in one transaction, the reverts under one
    new batch id. Later decisions outside the batch that touched the same objects block it (409,
    named), or with `cascade` are reverted first. A sweep's application is refused: its links
    are undone by reversing the sweep."""
    check_note(note)
    with transaction.atomic():
        if AuditEntry.objects.filter(batch=batch, action=AuditAction.SWEEP_APPLY).exists():
            raise RevertBlocked(
                "This batch is a sweep's application: reverse it from the sweep's page."
            )
        batch_decisions = _decisions().filter(batch=batch)
        entries = list(not_reverted(batch_decisions).order_by("pk"))
        if not entries:
            raise _batch_reverted() if batch_decisions.exists() else _no_batch_decision()
        # Every row this may revert, the batch's and the later ones', locked in one ascending
        # pass (the canonical order), then judged again: a concurrent revert of the same batch
        # (a double click, the console and the API) leaves nothing for the second one.
        guessed = _batch_dependents(entries)
        _lock(sorted({e.pk for e in entries} | {e.pk for e in guessed}))
        entries = list(not_reverted(AuditEntry.objects.filter(pk__in=[e.pk for e in entries])))
        if not entries:  # a concurrent revert of the same batch took them
            raise _batch_reverted()
        entries.sort(key=lambda e: e.pk)
        _hold([*entries, *guessed])
        later = _batch_dependents(entries)  # judged again, now that what they touch is held
        if later and not cascade:
            names = ", ".join(f"#{e.pk}" for e in later)
            raise RevertBlocked(
                "Later decisions outside this batch depend on it: revert them first "
                f"({names}), or revert them together.",
                details={"depends_on_this": [e.pk for e in later]},
            )
        _refuse_unheld(later, guessed)
        reverts_batch = uuid.uuid4()
        every = sorted([*entries, *later], key=lambda e: e.pk, reverse=True)
        return [_revert_one(e, actor, note, reverts_batch) for e in every]


def _batch_dependents(entries: list[AuditEntry]) -> list[AuditEntry]:
    """Later decisions outside these, not reverted, touching what they touched (one query for
    them all). For up to NARROWED_TOUCHES objects the database narrows them to those whose
    touches' text names one (quoted, so "drawer:12" is not "drawer:123"), rather than every
    later decision read and decoded here; the test of each stays exact."""
    inside = {e.pk for e in entries}
    touched = {t for e in entries for t in e.data.get("touches", [])}
    if not touched:
        return []
    later = not_reverted(
        AuditEntry.objects.filter(action__startswith=DECISION_PREFIX, pk__gt=min(inside)).exclude(
            action=REVERT_ACTION
        )
    )
    if len(touched) <= NARROWED_TOUCHES:  # a sweep's thousands would make a statement of them
        naming = Q()
        for touch in touched:
            naming |= Q(touches_text__contains=json.dumps(touch))
        text = Cast(KeyTransform("touches", "data"), TextField())
        later = later.alias(touches_text=text).filter(naming)
    return [
        e
        for e in later.order_by("pk")
        if e.pk not in inside and touched & set(e.data.get("touches", []))
    ]
