"""Curators' decisions on review items. Each is one transaction with its audit row, refuses an
item someone already decided, and can be reverted to the exact prior state from the audit log.

An item is a `similar_to` drawer link ("d<id>") or a `possibly_same_as` entity link ("e<id>").
The audit row of a decision holds the state before and after, the objects it touched and the
evidence shown; a revert is itself audited ("review.revert", target the decision), so the log stays
append-only and "reverted" is read from it rather than written into it.
"""

from __future__ import annotations

import enum
import re
import uuid
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import CharField, Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Cast
from django.utils import timezone

from dedup.errors import Conflict, DomainError, InvalidInput, NotFound
from palace.models import (
    DECISION_PREFIX,
    AuditAction,
    AuditEntry,
    AuditTarget,
    DistinctPair,
    Drawer,
    DrawerLink,
    Entity,
    EntityAlias,
    EntityLink,
)

REVERT_ACTION = AuditAction.REVIEW_REVERT
ITEM_TARGET = AuditTarget.REVIEW_ITEM


class Action(enum.StrEnum):
    ADD_ALIAS = "add_alias"
    MERGE = "merge"
    DELETE_LINK = "delete_link"
    DISMISS = "dismiss"
    # Judgements of a sweep's proposal (sampled for precision): nothing is applied.
    SAME = "same"
    WRONG = "wrong"


DRAWER_ACTIONS = (Action.MERGE, Action.DELETE_LINK, Action.DISMISS)
ENTITY_ACTIONS = (Action.ADD_ALIAS, Action.MERGE, Action.DELETE_LINK, Action.DISMISS)
PROPOSAL_ACTIONS = (Action.SAME, Action.WRONG)


class InvalidAction(DomainError):
    code = "invalid_action"


class AlreadyDecided(Conflict):
    code = "already_decided"


class RevertBlocked(Conflict):
    code = "revert_blocked"


@dataclass(frozen=True)
class ItemRef:
    """A queue item: "d12" is drawer link 12, "e7" entity link 7, "p3" a sweep's proposal 3."""

    kind: str  # "d", "e" or "p"
    pk: int

    def __str__(self) -> str:
        return f"{self.kind}{self.pk}"

    @property
    def is_drawer(self) -> bool:
        return self.kind == "d"

    @property
    def is_proposal(self) -> bool:
        return self.kind == "p"

    @property
    def actions(self) -> tuple[Action, ...]:
        if self.is_proposal:
            return PROPOSAL_ACTIONS
        return DRAWER_ACTIONS if self.is_drawer else ENTITY_ACTIONS

    @classmethod
    def parse(cls, value: object) -> ItemRef:
        if isinstance(value, ItemRef):
            return value
        match = re.fullmatch(r"([dep])([1-9][0-9]{0,17})", str(value))
        if not match:
            raise InvalidInput(
                "An item id is 'd' (drawer link), 'e' (entity link) or 'p' (a sweep's proposal) "
                "and a number, like d12.",
                code="invalid_id",
            )
        return cls(match[1], int(match[2]))

    @classmethod
    def of(cls, link) -> ItemRef:
        if isinstance(link, DrawerLink):
            return cls("d", link.pk)
        return cls("e" if isinstance(link, EntityLink) else "p", link.pk)


def last_decision(ref: ItemRef) -> AuditEntry | None:
    return (
        AuditEntry.objects.filter(target_type=ITEM_TARGET, target_id=str(ref))
        .exclude(action=REVERT_ACTION)
        .order_by("-id")
        .first()
    )


def already_decided(ref: ItemRef) -> AlreadyDecided:
    entry = last_decision(ref)
    if entry is None:
        return AlreadyDecided("This item was already decided.")
    action = entry.action.removeprefix(DECISION_PREFIX)
    return AlreadyDecided(
        f"{entry.actor_label} already decided this item ({action}) "
        f"on {entry.created_at:%Y-%m-%d at %H:%M} UTC.",
        details={
            "decided_by": entry.actor_label,
            "decided_at": entry.created_at.isoformat(),
            "action": action,
            "decision": entry.pk,
        },
    )


def _locked_link(ref: ItemRef) -> DrawerLink | EntityLink:
    model = DrawerLink if ref.is_drawer else EntityLink
    link = model.objects.select_for_update(of=("self",)).filter(pk=ref.pk).first()
    if link is None:
        if last_decision(ref) is not None:  # its link was deleted by a decision
            raise already_decided(ref)
        raise NotFound("No review item with that id.", code="item_not_found")
    if link.status != model.Status.OPEN:
        raise already_decided(ref)
    return link


def decide(
    *,
    item: str | ItemRef,
    action: str,
    actor,
    canonical: str | None = None,
    note: str = "",
    evidence: dict | None = None,
    batch: uuid.UUID | None = None,
) -> AuditEntry:
    """Apply one decision to one open item and audit it, or refuse and change nothing."""
    ref = ItemRef.parse(item)
    try:
        chosen = Action(action)
    except ValueError:
        chosen = None
    if chosen not in ref.actions:
        allowed = ", ".join(ref.actions)
        raise InvalidAction(f"{action!r} is not a decision for this item; use one of {allowed}.")
    if not isinstance(note, str) or len(note) > 2000:
        raise InvalidInput("note must be text of at most 2,000 characters.")
    if ref.is_proposal:
        from review import sweeps  # sweeps build on these decisions
        from review.models import Proposal

        proposal = Proposal.objects.filter(pk=ref.pk).first()
        if proposal is None:
            raise NotFound("No review item with that id.", code="item_not_found")
        return sweeps.judge(proposal, verdict=str(chosen), actor=actor, note=note, batch=batch)
    with transaction.atomic():
        link = _locked_link(ref)
        apply = _DRAWER_HANDLERS[chosen] if ref.is_drawer else _ENTITY_HANDLERS[chosen]
        before, after, touches = apply(link, canonical)
        link_model = type(link)
        if chosen is not Action.DELETE_LINK:
            link.mark_decided(actor)
            link.save(update_fields=["status", "decided_at", "decided_by"])
        return AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.decision(chosen),
            target_type=ITEM_TARGET,
            target_id=ref,
            before=before,
            after=after,
            data={
                "item": str(ref),
                "link_model": link_model.__name__,
                "touches": touches,
                "note": note,
                "evidence": evidence or {},
            },
            batch=batch,
        )


@dataclass(frozen=True)
class BulkResult:
    batch: uuid.UUID
    decided: list[AuditEntry]
    refused: dict[str, str]  # item -> why


def decide_many(*, items: list[str], action: str, actor, note: str = "") -> BulkResult:
    """One decision over several items, each with its own audit row under one batch id. An item
    that cannot take it (already decided, wrong kind) is reported and the others go ahead."""
    batch = uuid.uuid4()
    decided, refused = [], {}
    for item in items:
        try:
            decided.append(decide(item=item, action=action, actor=actor, note=note, batch=batch))
        except DomainError as error:
            refused[str(item)] = error.message
    return BulkResult(batch, decided, refused)


# --- drawer links ------------------------------------------------------------------------------


def _link_snapshot(link) -> dict:
    snapshot = {
        "id": link.pk,
        "newer": link.newer_id,
        "older": link.older_id,
        "similarity": link.similarity,
        "status": link.status,
        "created_at": link.created_at.isoformat(),
    }
    if isinstance(link, DrawerLink):
        snapshot |= {"verdict": link.verdict, "signals": link.signals}
    else:
        snapshot |= {"distance": link.distance}
    return snapshot


def _dismiss(link, canonical):
    link.status = type(link).Status.DISMISSED
    return {"status": "open"}, {"status": "dismissed"}, _touches(link)


def _delete_link(link, canonical):
    kind = DistinctPair.Kind.DRAWER if isinstance(link, DrawerLink) else DistinctPair.Kind.ENTITY
    low, high = DistinctPair.ordered(link.newer_id, link.older_id)
    _, remembered = DistinctPair.objects.get_or_create(kind=kind, low=low, high=high)
    before = {"link": _link_snapshot(link)}
    touches = _touches(link)
    link.delete()
    return before, {"link": None, "distinct": [low, high], "remembered": remembered}, touches


def _touches(link) -> list[str]:
    prefix = "drawer" if isinstance(link, DrawerLink) else "entity"
    return [f"{prefix}:{link.older_id}", f"{prefix}:{link.newer_id}"]


def _sides(link, canonical: str | None, model):
    """(canonical, other): the older side unless the curator chose the other by its id."""
    older, newer = (
        model.objects.select_for_update().get(pk=link.older_id),
        model.objects.select_for_update().get(pk=link.newer_id),
    )
    if canonical in (None, "", str(older.uuid)):
        return older, newer
    if canonical == str(newer.uuid):
        return newer, older
    raise InvalidInput("canonical must be the id of one side of the item.", code="invalid")


def _merge_drawers(link: DrawerLink, canonical):
    keep, other = _sides(link, canonical, Drawer)
    if keep.valid_to is not None or other.valid_to is not None:
        raise Conflict("Both drawers must be current to merge them.", code="drawer_not_current")
    before = {
        "status": "open",
        "other": {"id": other.pk, "valid_to": None, "superseded_by": None},
        "canonical": {"id": keep.pk, "consolidation": keep.consolidation},
    }
    keep.consolidation = consolidated(keep, other)
    keep.save(update_fields=["consolidation"])
    other.valid_to = timezone.now()
    other.superseded_by = keep
    other.save(update_fields=["valid_to", "superseded_by"])
    link.status = DrawerLink.Status.MERGED
    after = {
        "status": "merged",
        "other": {"id": other.pk, "valid_to": other.valid_to.isoformat(), "superseded_by": keep.pk},
        "canonical": {"id": keep.pk, "consolidation": keep.consolidation},
    }
    return before, after, _touches(link)


def consolidated(keep: Drawer, other: Drawer) -> dict:
    """The canonical drawer's record of everything merged into it: every contributing drawer
    with its provenance, the earliest and latest time the fact was seen, and the restatements."""

    def own(drawer: Drawer) -> list[dict]:
        return drawer.consolidation.get("sources") or [
            {
                "drawer": str(drawer.uuid),
                "agent": drawer.agent,
                "source": drawer.source,
                "seen_at": drawer.created_at.isoformat(),
            }
        ]

    sources = own(keep)
    known = {s["drawer"] for s in sources}
    sources += [s for s in own(other) if s["drawer"] not in known]
    seen = sorted(s["seen_at"] for s in sources)
    return {
        "sources": sources,
        "first_seen": seen[0],
        "last_seen": seen[-1],
        "restatements": len(sources) - 1,
    }


_DRAWER_HANDLERS = {
    Action.DISMISS: _dismiss,
    Action.DELETE_LINK: _delete_link,
    Action.MERGE: _merge_drawers,
}


# --- entity links ------------------------------------------------------------------------------


def _redirect(kind: str):
    def apply(link: EntityLink, canonical):
        keep, other = _sides(link, canonical, Entity)
        if keep.redirect_to_id is not None or other.redirect_to_id is not None:
            raise Conflict(
                "One of these entities already answers through another one.",
                code="entity_redirected",
            )
        alias_added = False
        if kind == Entity.Redirect.ALIAS and other.name != keep.name:
            _, alias_added = EntityAlias.objects.get_or_create(
                entity=keep, alias=other.name, defaults={"key": other.key}
            )
        other.redirect_to, other.redirect_kind = keep, kind
        other.save(update_fields=["redirect_to", "redirect_kind"])
        link.status = EntityLink.Status.ALIASED if kind == "alias" else EntityLink.Status.MERGED
        before = {
            "status": "open",
            "other": {"id": other.pk, "redirect_to": None},
            "canonical": keep.pk,
        }
        after = {
            "status": link.status,
            "other": {"id": other.pk, "redirect_to": keep.pk, "redirect_kind": kind},
            "canonical": keep.pk,
            "alias_added": other.name if alias_added else None,
        }
        return before, after, _touches(link)

    return apply


_ENTITY_HANDLERS = {
    Action.DISMISS: _dismiss,
    Action.DELETE_LINK: _delete_link,
    Action.ADD_ALIAS: _redirect(Entity.Redirect.ALIAS),
    Action.MERGE: _redirect(Entity.Redirect.MERGE),
}


def aliases_would_settle(ref: ItemRef, canonical: str | None = None) -> list[EntityLink]:
    """Open pairs an alias decision makes redundant: once the other entity answers through the
    canonical one, a pair between it and a third entity asks the same question as the pair
    between the canonical entity and that third entity, which is kept."""
    link = EntityLink.objects.select_related("newer", "older").get(pk=ref.pk)
    keep, other = link.older, link.newer
    if canonical and canonical == str(link.newer.uuid):
        keep, other = other, keep
    with_other = (
        EntityLink.objects.filter(status=EntityLink.Status.OPEN)
        .filter(Q(newer=other) | Q(older=other))
        .exclude(pk=link.pk)
        .select_related("newer", "older")
    )
    candidates = {
        (lk.older_id if lk.newer_id == other.pk else lk.newer_id): lk for lk in with_other
    }
    kept = EntityLink.objects.filter(
        Q(newer=keep, older_id__in=candidates) | Q(older=keep, newer_id__in=candidates)
    ).values_list("newer_id", "older_id")
    thirds = {newer if older == keep.pk else older for newer, older in kept}
    return [candidates[third] for third in sorted(thirds)]


# --- revert ------------------------------------------------------------------------------------


def reverts_of(entry: AuditEntry) -> AuditEntry | None:
    return AuditEntry.objects.filter(action=REVERT_ACTION, target_id=str(entry.pk)).first()


def dependents(entry: AuditEntry) -> list[AuditEntry]:
    """Later decisions, not reverted, that touched any object this one touched."""
    touched = set(entry.data.get("touches", []))
    later = not_reverted(
        AuditEntry.objects.filter(action__startswith=DECISION_PREFIX, pk__gt=entry.pk).exclude(
            action=REVERT_ACTION
        )
    ).order_by("pk")
    return [e for e in later if touched & set(e.data.get("touches", []))]


def not_reverted(entries: QuerySet[AuditEntry]) -> QuerySet[AuditEntry]:
    """The decisions among `entries` that no revert targets (a revert is a later audit row)."""
    reverts = AuditEntry.objects.filter(
        action=REVERT_ACTION,
        target_type=AuditTarget.DECISION,
        target_id=Cast(OuterRef("pk"), CharField()),
    )
    return entries.exclude(Exists(reverts))


def revert(
    *, decision: int | AuditEntry, actor, cascade: bool = False, note: str = ""
) -> list[AuditEntry]:
    """Undo a decision, restoring the exact prior state. If later decisions touched the same
    objects, refuse and name them, or (cascade) revert them too, newest first."""
    with transaction.atomic():
        entry = (
            decision
            if isinstance(decision, AuditEntry)
            else AuditEntry.objects.filter(pk=decision).first()
        )
        if (
            entry is None
            or not entry.action.startswith(DECISION_PREFIX)
            or entry.action == REVERT_ACTION
        ):
            raise NotFound("No decision with that id.", code="decision_not_found")
        done = reverts_of(entry)
        if done is not None:
            raise AlreadyDecided(
                f"{done.actor_label} already reverted this decision "
                f"on {done.created_at:%Y-%m-%d at %H:%M} UTC.",
                code="already_reverted",
            )
        later = dependents(entry)
        if later and not cascade:
            raise RevertBlocked(
                "Later decisions depend on this one: revert them first, or revert them together.",
                details={"depends_on_this": [e.pk for e in later]},
            )
        batch = uuid.uuid4() if later else entry.batch
        reverted = [_revert_one(e, actor, note, batch) for e in reversed(later)]
        reverted.append(_revert_one(entry, actor, note, batch))
    return reverted


def _revert_one(entry: AuditEntry, actor, note: str, batch) -> AuditEntry:
    ref = ItemRef.parse(entry.data["item"])
    action = Action(entry.action.removeprefix(DECISION_PREFIX))
    before, after = entry.before, entry.after
    model = DrawerLink if ref.is_drawer else EntityLink
    try:
        if ref.is_proposal:
            from review.models import Proposal

            undone = Proposal.objects.filter(pk=ref.pk, verdict=after["verdict"]).update(verdict="")
            if not undone:
                raise Conflict(
                    "The proposal changed since; it cannot be reverted.", code="revert_blocked"
                )
        elif action is Action.DELETE_LINK:
            _restore_link(model, before["link"])
            low, high = after["distinct"]
            if after.get("remembered"):
                kind = DistinctPair.Kind.DRAWER if ref.is_drawer else DistinctPair.Kind.ENTITY
                DistinctPair.objects.filter(kind=kind, low=low, high=high).delete()
        else:
            link = model.objects.select_for_update().get(pk=ref.pk)
            if link.status != after["status"]:
                raise Conflict(
                    "The item changed since; it cannot be reverted.", code="revert_blocked"
                )
            if action is Action.MERGE and ref.is_drawer:
                Drawer.objects.filter(pk=before["other"]["id"]).update(
                    valid_to=None, superseded_by=None
                )
                Drawer.objects.filter(pk=before["canonical"]["id"]).update(
                    consolidation=before["canonical"]["consolidation"]
                )
            elif action in (Action.MERGE, Action.ADD_ALIAS):
                Entity.objects.filter(pk=before["other"]["id"]).update(
                    redirect_to=None, redirect_kind=""
                )
                if after.get("alias_added"):
                    EntityAlias.objects.filter(
                        entity_id=after["canonical"], alias=after["alias_added"]
                    ).delete()
            link.reopen()
            link.save(update_fields=["status", "decided_at", "decided_by"])
    except IntegrityError as error:
        raise RevertBlocked(
            "Restoring the prior state would clash with what was written since "
            "(for example a drawer now holding the same name).",
        ) from error
    return AuditEntry.objects.record(
        actor=actor,
        action=AuditAction.REVIEW_REVERT,
        target_type=AuditTarget.DECISION,
        target_id=entry.pk,
        before=after,
        after=before,
        data={"item": str(ref), "reverts": entry.pk, "reverted_action": str(action), "note": note},
        batch=batch,
    )


def _restore_link(model, snapshot: dict) -> None:
    fields = {
        "pk": snapshot["id"],
        "newer_id": snapshot["newer"],
        "older_id": snapshot["older"],
        "similarity": snapshot["similarity"],
        "status": snapshot["status"],
        "created_at": snapshot["created_at"],
    }
    if model is DrawerLink:
        fields |= {"verdict": snapshot["verdict"], "signals": snapshot["signals"]}
    else:
        fields |= {"distance": snapshot["distance"]}
    with transaction.atomic():
        model.objects.create(**fields)


def last_own_decision(actor) -> AuditEntry | None:
    """The curator's latest decision that is not reverted yet (for "undo")."""
    own = AuditEntry.objects.filter(actor=actor, action__startswith=DECISION_PREFIX).exclude(
        action=REVERT_ACTION
    )
    return not_reverted(own).order_by("-pk").first()
