"""Curators' decisions on review items. Each is one transaction with its audit row, refuses an
item someone already decided, and can be reverted to the exact prior state from the audit log
(see `reverts`). What each action does is in `actions`.

The audit row of a decision holds the state before and after, the objects it touched and the
evidence shown. Judging a sweep's proposal is a decision like the others, on item "p<id>".
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Subquery

from dedup import metrics
from dedup.errors import Conflict, DomainError, InvalidInput, NotFound
from dedup.locks import link_held
from palace.models import (
    DECISION_PREFIX,
    AuditAction,
    AuditEntry,
    Drawer,
    DrawerLink,
    Entity,
    EntityLink,
)
from review.items import (
    ITEM_TARGET,
    Action,
    AlreadyDecided,
    InvalidAction,
    ItemKind,
    ItemRef,
    check_note,
)
from review.models import Proposal, SweepJob
from review.selectors.audit import last_decision
from review.selectors.gates import held_back
from review.selectors.items import aliases_would_settle
from review.selectors.queue import MAX_BULK
from review.services.actions import ACTIONS, LINK_MODELS, Change, Link
from review.services.sweep_locks import worker_gone

SIDE_MODELS: dict[ItemKind, type[Drawer] | type[Entity]] = {
    ItemKind.DRAWER: Drawer,
    ItemKind.ENTITY: Entity,
}


def already_decided(ref: ItemRef, actor: Any = None) -> AlreadyDecided:
    """Refusing a decision on an item decided since: by whom (the asker is told "You", as when
    they decided it in another tab), how and when."""
    entry = last_decision(ref)
    if entry is None:
        return AlreadyDecided("This item was already decided.")
    action = entry.action.removeprefix(DECISION_PREFIX)
    mine = actor is not None and entry.actor_id is not None and entry.actor_id == actor.pk
    return AlreadyDecided(
        f"{'You' if mine else entry.actor_label} already decided this item ({action}) "
        f"on {entry.created_at:%Y-%m-%d at %H:%M} UTC.",
        details={
            "decided_by": entry.actor_label,
            "decided_at": entry.created_at.isoformat(),
            "action": action,
            "decision": entry.pk,
        },
    )


def _not_found(ref: ItemRef) -> NotFound:
    """The refusal of an item that is not there: one whose id was handed out (a later one
    exists; ids are never used again) was removed since it was listed, which a curator acting on
    a page left open needs told apart from a mistyped id."""
    if _model(ref).objects.filter(pk__gt=ref.pk).exists():
        return NotFound(
            "This item is gone: it was removed after it was listed (a drawer or entity of it "
            "deleted, an import or a sweep reversed); the audit log says which.",
            code="item_not_found",
            details={"item": str(ref), "removed": True},
        )
    return NotFound("No review item with that id.", code="item_not_found")


def _model(ref: ItemRef) -> type[Proposal] | type[Link]:
    return Proposal if ref.kind is ItemKind.PROPOSAL else LINK_MODELS[ref.kind]


def check_item_known(ref: ItemRef) -> None:
    """404 `item_not_found` unless the item exists or was decided (a decision may delete its
    link): read before a request's body, so an unknown id is a 404 whatever the body holds. The
    decision checks again, holding the item."""
    if not _model(ref).objects.filter(pk=ref.pk).exists() and last_decision(ref) is None:
        raise _not_found(ref)


def _locked_link(ref: ItemRef, actor: Any = None) -> Link:
    """The open link, locked after its two sides, as a DELETE takes them (dedup/locks.py:
    drawers before links), in one statement; gone means decided or deleted since."""
    link = link_held(LINK_MODELS[ref.kind], ref.pk, sides=SIDE_MODELS[ref.kind])
    if link is None:
        if last_decision(ref) is not None:  # its link was deleted by a decision
            raise already_decided(ref, actor)
        raise _not_found(ref)
    if link.status != type(link).Status.OPEN:
        raise already_decided(ref, actor)
    return link


def _locked_proposal(ref: ItemRef, actor: Any = None) -> Proposal:
    """The proposal, held, if not judged yet. While its run's Apply or Reverse is being done by a
    worker, which holds the run's proposals until it commits (a minute for a big run), refused at
    once (`application_under_way`) rather than left waiting for a lock to time out (503)."""
    run = Proposal.objects.filter(pk=ref.pk).values("run_id")
    job = SweepJob.objects.filter(run_id=Subquery(run), status=SweepJob.Status.RUNNING).first()
    if job is not None and not worker_gone(job):  # a stopped worker's rolled back: go on
        raise Conflict(
            f"Sweep {job.run_id}'s {job.kind} is under way (job {job.pk}): judge its proposals "
            "once it is done.",
            code="application_under_way",
            details={"run": job.run_id, "job": job.pk},
        )
    proposal = Proposal.objects.select_for_update().filter(pk=ref.pk).first()
    if proposal is None:
        raise _not_found(ref)
    if proposal.verdict:
        raise already_decided(ref, actor)
    return proposal


def _chosen_action(ref: ItemRef, action: str) -> Action:
    try:
        chosen = Action(action)
    except ValueError:
        chosen = None
    if chosen not in ref.actions:
        allowed = ", ".join(ref.actions)
        raise InvalidAction(
            f"{action!r} is not a decision for this item; use one of {allowed}.",
            details={"action": str(action)[:100], "offered": list(ref.actions)},
        )
    return chosen


def link_evidence(link: Link) -> dict[str, Any]:
    """The evidence a curator decides on, read from the item's current link on the server (never
    taken from the browser, which could send anything): what the page shows of it."""
    if isinstance(link, DrawerLink):
        return {"verdict": link.verdict, "similarity": link.similarity, "signals": link.signals}
    return {"similarity": link.similarity, "distance": link.distance}


def _audit_data(
    ref: ItemRef, target: Any, change: Change, note: str, context: dict | None
) -> dict[str, Any]:
    if ref.is_proposal:  # the proposal keeps its own evidence (texts and gates)
        return {"item": str(ref), **change.context, "touches": change.touches, "note": note}
    return {
        "item": str(ref),
        "link_model": type(target).__name__,
        "touches": change.touches,
        "note": note,
        # The caller's context (which interface, which sweep) first: the link's own evidence,
        # read here from the locked row, always wins.
        "evidence": {**(context or {}), **link_evidence(target)},
    }


class HeldBack(Exception):
    """A decision made unseen (`decide(unseen=True)`) that the pair's texts hold back
    (`review.selectors.gates`): the item is left open, and `reason` says why. Not an error of
    the request: the bulk decision reports it beside the items decided."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def decide(
    *,
    item: str | ItemRef,
    action: str,
    actor: Any,
    canonical: str | None = None,
    note: str = "",
    evidence: dict | None = None,
    batch: uuid.UUID | None = None,
    unseen: bool = False,
) -> AuditEntry:
    """Apply one decision to one open item and audit it, or refuse and change nothing.

    The audit row's evidence is built here from the item's link as it is when locked; `evidence`
    only adds where the decision came from (e.g. {"via": "admin"}, a sweep and its proposal).
    `unseen`: no curator saw this item's texts (a bulk decision), so a merge or an alias of a
    pair whose texts differ is held back (`HeldBack`), judged on the link as locked."""
    ref = ItemRef.parse(item)
    chosen = _chosen_action(ref, action)
    check_note(note)
    with transaction.atomic():
        target = _locked_proposal(ref, actor) if ref.is_proposal else _locked_link(ref, actor)
        if unseen and (reason := held_back(target, chosen)):
            raise HeldBack(reason)
        change = ACTIONS[ref.kind][chosen].apply(target, canonical=canonical, actor=actor)
        metrics.decision_recorded(chosen)
        return AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.decision(chosen),
            target_type=ITEM_TARGET,
            target_id=ref,
            before=change.before,
            after=change.after,
            data=_audit_data(ref, target, change, note, evidence),
            batch=batch,
        )


def decide_settling(
    *,
    item: str | ItemRef,
    action: str,
    actor: Any,
    also_dismiss: list[str],
    canonical: str | None = None,
    note: str = "",
    evidence: dict | None = None,
) -> AuditEntry:
    """`decide`, and where that adds an alias, dismiss with it, in one batch and one
    transaction, the pairs among `also_dismiss` the alias settles (`aliases_would_settle`, for
    the canonical side chosen): never another pair, whatever was sent. The item's decision.
    A malformed id among `also_dismiss` is refused (400 `invalid_id`) before anything is
    decided, whatever the action: it was dropped unread, and the decision made."""
    ref = ItemRef.parse(item)
    also_dismiss = [str(_other_item(other)) for other in also_dismiss]
    if not also_dismiss:  # the item's decision alone
        return decide(
            item=ref, action=action, actor=actor, canonical=canonical, note=note, evidence=evidence
        )
    if len(also_dismiss) > MAX_BULK:
        raise InvalidInput(
            f"also_dismiss holds at most {MAX_BULK:,} items.", details={"field": "also_dismiss"}
        )
    batch = uuid.uuid4()
    with transaction.atomic():
        settled = _settled_by_alias(ref, canonical)
        entry = decide(
            item=ref,
            action=action,
            actor=actor,
            canonical=canonical,
            note=note,
            evidence=evidence,
            batch=batch,
        )
        if entry.action == AuditAction.REVIEW_ADD_ALIAS:
            for other in dict.fromkeys(also_dismiss):
                if other in settled:
                    decide(
                        item=other,
                        action=Action.DISMISS,
                        actor=actor,
                        note=f"settled by the alias decided on {ref}",
                        batch=batch,
                    )
    return entry


def _other_item(value: object) -> ItemRef:
    """An id of `also_dismiss`, parsed (`ItemRef.parse`), refused naming the field."""
    try:
        return ItemRef.parse(value)
    except InvalidInput as error:
        details = {"field": "also_dismiss", "item": str(value)[:40]}
        message = f"also_dismiss: {error.message}"
        raise InvalidInput(message, code=error.code, details=details) from None


def _settled_by_alias(ref: ItemRef, canonical: str | None) -> set[str]:
    if ref.kind is not ItemKind.ENTITY:
        return set()
    try:
        return {str(ItemRef.of(link)) for link in aliases_would_settle(ref, canonical)}
    except EntityLink.DoesNotExist:  # gone: the decision itself says so
        return set()


@dataclass(frozen=True)
class BulkResult:
    batch: uuid.UUID
    decided: list[AuditEntry]
    refused: dict[str, DomainError]  # item -> why
    held_back: dict[str, str]  # item -> why it was left open (`HeldBack`)


def decide_many(*, items: list[str], action: str, actor: Any, note: str = "") -> BulkResult:
    """One decision over several items, each with its own audit row under one batch id. An item
    that cannot take it (already decided, wrong kind) is reported and the others go ahead; so is
    one a merge (or an alias) made unseen would join though its texts differ, left open
    (`decide(unseen=True)`, the gates of `review.selectors.gates`). More than MAX_BULK items, or
    a note `decide` refuses, are refused whole (InvalidInput), before any is decided: a form's
    list is the sender's, and each item is a transaction."""
    if len(items) > MAX_BULK:
        raise InvalidInput(
            f"At most {MAX_BULK:,} items can be decided at once: decide the rest in another batch.",
            details={"field": "items"},
        )
    check_note(note)
    batch = uuid.uuid4()
    decided, refused, held = [], {}, {}
    for item in items:
        try:
            decided.append(
                decide(item=item, action=action, actor=actor, note=note, batch=batch, unseen=True)
            )
        except DomainError as error:
            refused[str(item)] = error
        except HeldBack as holding:
            held[str(item)] = holding.reason
    return BulkResult(batch, decided, refused, held)
