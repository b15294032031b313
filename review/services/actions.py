"""What each decision does, and how it is undone, side by side: one small class per action.

`apply` changes an open, locked item and returns what changed (the state before and after and
the objects it touched), which the decision writes into its audit row. `undo` restores the prior
state from that row. Adding an action is one class here, registered in `ACTIONS` (and its name in
`review.items.Action` and its kind's action tuple).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from dedup.errors import Conflict, InvalidInput
from dedup.services import index_person_alias
from palace.models import DistinctPair, Drawer, DrawerLink, Entity, EntityAlias, EntityLink
from review.items import Action, ItemKind, ItemRef
from review.models import Proposal
from review.services.drawer_merges import consolidated, make_current, merged_at

Link = DrawerLink | EntityLink
LINK_MODELS: dict[ItemKind, type[Link]] = {
    ItemKind.DRAWER: DrawerLink,
    ItemKind.ENTITY: EntityLink,
}
DECIDED_FIELDS = ["status", "decided_at", "decided_by"]


@dataclass(frozen=True)
class Change:
    before: dict[str, Any]
    after: dict[str, Any]
    touches: list[str]
    context: dict[str, Any] = field(default_factory=dict)  # more for the audit row's data


class ItemAction:
    """One decision on one kind of item."""

    def apply(self, target: Any, *, canonical: str | None, actor: Any) -> Change:
        raise NotImplementedError

    def undo(self, ref: ItemRef, *, before: dict, after: dict) -> list[str]:
        """Restore the prior state; returns what could not be restored (nothing, mostly)."""
        raise NotImplementedError


def target_deleted(what: str, *, which: str = "", details: dict | None = None) -> Conflict:
    """The refusal to revert; `which` names the row deleted (e.g. "drawer 12")."""
    named = f" (deleted: {which})" if which else ""
    return Conflict(
        f"{what} was deleted after this decision, so the decision cannot be reverted{named}.",
        code="revert_target_deleted",
        details=details,
    )


def touches(link: Link) -> list[str]:
    prefix = "drawer" if isinstance(link, DrawerLink) else "entity"
    return [f"{prefix}:{link.older_id}", f"{prefix}:{link.newer_id}"]


def _sides(link: Link, canonical: str | None, model: type[Drawer] | type[Entity]) -> tuple:
    """(canonical, other): the older side unless the curator chose the other by its id."""
    older, newer = (
        model.objects.select_for_update(no_key=True).get(pk=link.older_id),
        model.objects.select_for_update(no_key=True).get(pk=link.newer_id),
    )
    if canonical in (None, "", str(older.uuid)):
        return older, newer
    if canonical == str(newer.uuid):
        return newer, older
    raise InvalidInput("canonical must be the id of one side of the item.", code="invalid")


def merge_drawer_into(keep: Drawer, other: Drawer, status: str) -> tuple[dict, dict]:
    """Supersede `other` by `keep`, which records its provenance (a pair's merge, a cluster's):
    the link's and both drawers' state before and after, as `MergeDrawers.restore` undoes it."""
    if keep.valid_to is not None or other.valid_to is not None:
        raise Conflict("Both drawers must be current to merge them.", code="drawer_not_current")
    before = {
        "status": DrawerLink.Status.OPEN,
        "other": {"id": other.pk, "valid_to": None, "superseded_by": None},
        "canonical": {"id": keep.pk, "consolidation": keep.consolidation},
    }
    keep.consolidation = consolidated(keep, other)
    keep.save(update_fields=["consolidation"])
    other.valid_to, other.superseded_by = timezone.now(), keep
    other.save(update_fields=["valid_to", "superseded_by"])
    after = {
        "status": status,
        "other": {"id": other.pk, "valid_to": other.valid_to.isoformat(), "superseded_by": keep.pk},
        "canonical": {"id": keep.pk, "consolidation": keep.consolidation},
    }
    return before, after


def redirect_entity_into(
    keep: Entity, other: Entity, kind: Entity.Redirect, status: str
) -> tuple[dict, dict]:
    """`other` answers through `keep`, as an alias (its name recorded as the curator's alias of
    `keep`) or merged into it (a pair's decision, a cluster's): the state before and after, as
    `RedirectEntity.restore` undoes it."""
    if keep.redirect_to_id is not None or other.redirect_to_id is not None:
        raise Conflict(
            "One of these entities already answers through another one.", code="entity_redirected"
        )
    alias_added = False
    if kind == Entity.Redirect.ALIAS and other.name != keep.name:
        alias, alias_added = EntityAlias.objects.get_or_create(
            entity=keep,
            alias=other.name,
            defaults={"key": other.key, "source": EntityAlias.Source.CURATOR},
        )
        if alias_added:  # a person recorded it: a typo of it converges too
            index_person_alias(alias)
    other.redirect_to, other.redirect_kind = keep, kind
    other.save(update_fields=["redirect_to", "redirect_kind"])
    before = {
        "status": EntityLink.Status.OPEN,
        "other": {"id": other.pk, "redirect_to": None},
        "canonical": keep.pk,
    }
    after = {
        "status": status,
        "other": {"id": other.pk, "redirect_to": keep.pk, "redirect_kind": kind},
        "canonical": keep.pk,
        "alias_added": other.name if alias_added else None,
    }
    return before, after


# --- decisions that settle a link and keep it --------------------------------------------------


class LinkDecision(ItemAction):
    """Sets the link's status and stamps the decision on it; undone by reopening the link once
    `restore` has put back what `settle` changed elsewhere."""

    def settle(self, link: Link, canonical: str | None) -> Change:
        raise NotImplementedError

    def restore(self, before: dict, after: dict) -> None:
        """Undo what `settle` changed besides the link (nothing by default)."""

    def restore_without_link(self, before: dict, after: dict) -> list[str]:
        """Undo what can be undone once the link is gone (deleted with one of its sides)."""
        raise target_deleted("The item's link")

    def apply(self, target: Link, *, canonical: str | None, actor: Any) -> Change:
        change = self.settle(target, canonical)
        target.mark_decided(actor)
        target.save(update_fields=DECIDED_FIELDS)
        return change

    def undo(self, ref: ItemRef, *, before: dict, after: dict) -> list[str]:
        link = LINK_MODELS[ref.kind].objects.select_for_update().filter(pk=ref.pk).first()
        if link is None:
            return self.restore_without_link(before, after)
        if link.status != after["status"]:
            raise Conflict("The item changed since; it cannot be reverted.", code="revert_blocked")
        self.restore(before, after)
        link.reopen()
        link.save(update_fields=DECIDED_FIELDS)
        return []


class Dismiss(LinkDecision):
    """The resemblance stands; nothing else changes."""

    def settle(self, link: Link, canonical: str | None) -> Change:
        link.status = type(link).Status.DISMISSED
        return Change({"status": type(link).Status.OPEN}, {"status": link.status}, touches(link))


class MergeDrawers(LinkDecision):
    """The older drawer (or the one chosen) stays current and records the other's provenance;
    the other is superseded by it."""

    def settle(self, link: Link, canonical: str | None) -> Change:
        assert isinstance(link, DrawerLink)  # ACTIONS offers this on drawer links only
        keep, other = _sides(link, canonical, Drawer)
        link.status = DrawerLink.Status.MERGED
        return Change(*merge_drawer_into(keep, other, link.status), touches(link))

    def restore(self, before: dict, after: dict) -> None:
        if before.get("other") is None:  # a cluster's link between two members merged by others
            return
        make_current(
            before["other"]["id"], beside=before["canonical"]["id"], merged_at=merged_at(after)
        )
        # Writing back the snapshot is exact: a revert holds the kept drawer before it looks for
        # later decisions on it (reverts._hold), so none merged into it since, unreverted.
        Drawer.objects.filter(pk=before["canonical"]["id"]).update(
            consolidation=before["canonical"]["consolidation"]
        )

    def restore_without_link(self, before: dict, after: dict) -> list[str]:
        """A side was deleted, and the link with it; what can be undone is: the kept drawer
        deleted, the merged-away drawer becomes current again; the merged-away drawer deleted
        (`reverts._check_sides`), the kept drawer's
        consolidation is written back, which is the state the merge never happened in and the
        drawer was then deleted. Returns what could not be restored."""
        other, kept = before.get("other"), before["canonical"]["id"]
        kept_there = Drawer.objects.filter(pk=kept).exists()
        other_there = other is not None and Drawer.objects.filter(pk=other["id"]).exists()
        if other is None or (kept_there and other_there):
            raise target_deleted("The item's link")
        if other_there:
            make_current(other["id"], beside=kept, merged_at=merged_at(after))
            return [
                "the link, deleted with the kept drawer",
                "the kept drawer's consolidation, deleted with it",
            ]
        lost = [
            "the link, deleted with the merged-away drawer",
            f"the merged-away drawer (drawer {other['id']}), deleted since: it stays deleted",
        ]
        if not kept_there:
            return [*lost, "the kept drawer's consolidation, deleted with it"]
        Drawer.objects.filter(pk=kept).update(consolidation=before["canonical"]["consolidation"])
        return lost


class RedirectEntity(LinkDecision):
    """The other entity answers through the canonical one, as an alias or merged into it."""

    def __init__(self, kind: Entity.Redirect) -> None:
        self.kind = kind

    def settle(self, link: Link, canonical: str | None) -> Change:
        assert isinstance(link, EntityLink)  # ACTIONS offers this on entity links only
        keep, other = _sides(link, canonical, Entity)
        link.status = (
            EntityLink.Status.ALIASED
            if self.kind == Entity.Redirect.ALIAS
            else EntityLink.Status.MERGED
        )
        return Change(*redirect_entity_into(keep, other, self.kind, link.status), touches(link))

    def restore(self, before: dict, after: dict) -> None:
        if before.get("other") is None:  # a cluster's link between two members merged by others
            return
        Entity.objects.filter(pk=before["other"]["id"]).update(redirect_to=None, redirect_kind="")
        if after.get("alias_added"):
            EntityAlias.objects.filter(
                entity_id=after["canonical"], alias=after["alias_added"]
            ).delete()


# --- a decision that removes the link ----------------------------------------------------------


def _distinct_kind(link_model: type[Link]) -> DistinctPair.Kind:
    return DistinctPair.Kind.DRAWER if link_model is DrawerLink else DistinctPair.Kind.ENTITY


def _link_snapshot(link: Link) -> dict:
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


def _restore_link(model: type[Link], snapshot: dict) -> None:
    """The link as it was. Its sides are held by the revert (reverts._hold, after checking they
    still exist), so a DELETE of one waits and deletes the link with it, never fails it."""
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


class DeleteLink(ItemAction):
    """The link was wrong: it is deleted and the pair remembered as distinct, so it is never
    proposed again. Undone by recreating the link as it was and forgetting the pair."""

    def apply(self, target: Link, *, canonical: str | None, actor: Any) -> Change:
        kind = _distinct_kind(type(target))
        low, high = DistinctPair.ordered(target.newer_id, target.older_id)
        _, remembered = DistinctPair.objects.get_or_create(**DistinctPair.of(kind, low, high))
        before = {"link": _link_snapshot(target)}
        touched = touches(target)
        target.delete()
        after = {"link": None, "distinct": [low, high], "remembered": remembered}
        return Change(before, after, touched)

    def undo(self, ref: ItemRef, *, before: dict, after: dict) -> list[str]:
        model = LINK_MODELS[ref.kind]
        _restore_link(model, before["link"])
        low, high = after["distinct"]
        if after.get("remembered"):
            DistinctPair.objects.filter(
                **DistinctPair.of(_distinct_kind(model), low, high)
            ).delete()
        return []


# --- a sweep's proposal ------------------------------------------------------------------------


class JudgeProposal(ItemAction):
    """A curator's verdict on a sampled proposal: the same thing, or not. Nothing is applied;
    the verdicts measure the run's precision."""

    def __init__(self, verdict: Action) -> None:
        self.verdict = verdict

    def apply(self, target: Proposal, *, canonical: str | None, actor: Any) -> Change:
        target.verdict = self.verdict
        target.save(update_fields=["verdict"])
        return Change(
            {"verdict": ""},
            {"verdict": self.verdict},
            [f"proposal:{target.pk}"],
            context={"run": target.run_id},
        )

    def undo(self, ref: ItemRef, *, before: dict, after: dict) -> list[str]:
        # Held before it is judged (FOR NO KEY UPDATE, as `dedup.locks.rows_held`; the revert
        # held it already, after its audit row: `reverts._hold`). A sweep's apply holds its
        # proposals until it commits, so this judges what the apply left. Judged unheld, the
        # check ran before the apply committed and the UPDATE, waiting on the apply, matched
        # after it: the verdict was undone and the distinct pair it caused stayed recorded.
        proposal = Proposal.objects.select_for_update(no_key=True).filter(pk=ref.pk).first()
        # issue 13, defect 6: applying the run recorded a "not the same" pair as distinct; the
        # verdict that did it stands until the run is reversed.
        if proposal is not None and proposal.status == Proposal.Status.DISTINCT:
            raise Conflict(
                "Applying the run recorded this pair as distinct on this verdict; reverse the "
                "run first.",
                code="revert_blocked",
                details={"proposal": proposal.pk, "run": proposal.run_id},
            )
        if proposal is None or proposal.verdict != after["verdict"]:
            raise Conflict(
                "The proposal changed since; it cannot be reverted.", code="revert_blocked"
            )
        proposal.verdict = ""
        proposal.save(update_fields=["verdict"])
        return []


_dismiss, _delete_link = Dismiss(), DeleteLink()
ACTIONS: dict[ItemKind, dict[Action, ItemAction]] = {
    ItemKind.DRAWER: {
        Action.MERGE: MergeDrawers(),
        Action.DELETE_LINK: _delete_link,
        Action.DISMISS: _dismiss,
    },
    ItemKind.ENTITY: {
        Action.ADD_ALIAS: RedirectEntity(Entity.Redirect.ALIAS),
        Action.MERGE: RedirectEntity(Entity.Redirect.MERGE),
        Action.DELETE_LINK: _delete_link,
        Action.DISMISS: _dismiss,
    },
    ItemKind.PROPOSAL: {
        Action.SAME: JudgeProposal(Action.SAME),
        Action.WRONG: JudgeProposal(Action.WRONG),
    },
}
