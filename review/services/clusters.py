"""Deciding a cluster at once: merge all or some members into the canonical one, mark others as
distinct, leave the rest open; one transaction, one audit row per link under one batch id, so
the audit log reads like the pair decisions it stands for and `revert_batch` undoes it as one.

What becomes of each open link between shown members:
- both ends merged (or canonical): the link is `merged` (`aliased` for entities as aliases). The
  links of a spanning tree from the canonical member carry the merges: each merged member is
  superseded by (drawers) or redirected to (entities) the canonical one in its tree link's row,
  in the same before/after shape as a pair's merge, so the pair's undo restores it;
- one end distinct, the other merged or canonical: the link is deleted and the pair remembered
  as distinct (a pair's `delete_link`);
- anything else (a member left open; two distinct members, which may be the same as each
  other): the link stays open.
"""

from __future__ import annotations

import uuid
from collections import deque
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from dedup.errors import Conflict, InvalidInput, NotFound
from dedup.locks import rows_held
from palace.models import AuditAction, AuditEntry, Drawer, DrawerLink, Entity
from palace.models import EntityLink as EntityLinkModel
from review.items import ITEM_TARGET, Action, ItemRef, check_note
from review.selectors.clusters import Cluster, cluster_of
from review.services.actions import (
    DECIDED_FIELDS,
    Change,
    DeleteLink,
    Link,
    merge_drawer_into,
    redirect_entity_into,
)
from review.services.decisions import link_evidence

ENTITY_MODES = (Action.ADD_ALIAS, Action.MERGE)


@dataclass(frozen=True)
class ClusterChoice:
    """What the curator chose, by member uuid."""

    canonical: str
    merge: frozenset[str]
    distinct: frozenset[str]
    shown_links: frozenset[int]  # the open links the page showed: the 409 guard
    mode: Action = Action.MERGE  # entities: add_alias or merge


@dataclass(frozen=True)
class ClusterResult:
    cluster: str
    batch: uuid.UUID
    decided: list[AuditEntry]
    merged: int
    distinct: int


class ClusterChanged(Conflict):
    code = "cluster_changed"


def _gone(ref: ItemRef, choice: ClusterChoice) -> NotFound | ClusterChanged:
    """No open cluster holds `ref` (any more): 409 cluster_changed when links the page showed are
    there, decided since (in another tab, by another curator), else 404."""
    message = f"No open cluster holds {ref}: its links were decided, or it is only a pair now."
    model = DrawerLink if ref.is_drawer else EntityLinkModel
    shown = model.objects.filter(pk__in=choice.shown_links)  # not links that never were
    if shown.exists():
        decided = sorted(shown.values_list("pk", flat=True))
        return ClusterChanged(message, details={"decided": decided, "joined": []})
    return NotFound(message, code="item_not_found")


def _locked_cluster(
    ref: ItemRef, choice: ClusterChoice
) -> tuple[Cluster, dict[int, Link], dict[str, Any]]:
    """The cluster, recomputed with its members and then its links locked (each by ascending id:
    drawers before links, as a DELETE takes them); refused if its open links are not the ones the
    page showed. Returns it, its links by id and its members (locked) by uuid."""
    cluster = cluster_of(ref)
    if cluster is None:
        raise _gone(ref, choice)
    model = DrawerLink if ref.is_drawer else EntityLinkModel
    ids = sorted(set(cluster.link_ids) | set(choice.shown_links))
    sides = model.objects.filter(pk__in=ids).values_list("older_id", "newer_id")
    held: dict[int, Any] = rows_held(
        Drawer if ref.is_drawer else Entity,
        {pk for pair in sides for pk in pair} | set(cluster.member_ids),
    )
    rows = model.objects.select_for_update(of=("self",)).filter(pk__in=ids).order_by("pk")
    links: dict[int, Link] = {link.pk: link for link in rows}
    cluster = cluster_of(ref)  # again, now that its members and links are held
    if cluster is None:
        raise _gone(ref, choice)
    now_open = set(cluster.link_ids)
    if now_open != set(choice.shown_links) or not set(cluster.member_ids) <= set(held):
        decided = sorted(choice.shown_links - now_open)
        joined = sorted(now_open - choice.shown_links)
        why = []
        if decided:
            why.append(f"{_refs(ref, decided)} decided or deleted since")
        if joined:
            why.append(f"{_refs(ref, joined)} linked into it since")
        raise ClusterChanged(
            f"This cluster changed since the page was shown ({'; '.join(why)}): "
            "look at it again before deciding.",
            details={"decided": decided, "joined": joined},
        )
    members = {str(held[pk].uuid): held[pk] for pk in sorted(cluster.member_ids)}
    return cluster, {pk: links[pk] for pk in cluster.link_ids}, members


def _refs(ref: ItemRef, pks: list[int]) -> str:
    return ", ".join(str(ItemRef(ref.kind, pk)) for pk in pks)


def _validate(choice: ClusterChoice, members: dict[str, Any], ref: ItemRef) -> None:
    unknown = ({choice.canonical} | choice.merge | choice.distinct) - set(members)
    if unknown:
        raise InvalidInput(
            "canonical, merge and distinct must name members of the cluster.",
            details={"field": "members", "unknown": sorted(unknown)},
        )
    if choice.canonical in choice.merge | choice.distinct or choice.merge & choice.distinct:
        raise InvalidInput("A member is either canonical, merged, distinct, or left open.")
    if not choice.merge and not choice.distinct:
        raise InvalidInput("Choose at least one member to merge or to mark as distinct.")
    if not ref.is_drawer and choice.mode not in ENTITY_MODES:
        raise InvalidInput("mode must be add_alias or merge.", code="invalid_action")


def _tree(keep: int, group: set[int], links: dict[int, Link]) -> dict[int, int]:
    """For each merged member, the link that carries its merge: a breadth-first spanning tree
    from the canonical member over links within the group. Refuses a merged member that is
    linked to the canonical one only through members outside the group."""
    carried: dict[int, int] = {}
    reached, queue = {keep}, deque([keep])
    while queue:
        node = queue.popleft()
        for pk, link in sorted(links.items()):
            ends = {link.older_id, link.newer_id}
            if node in ends and ends <= group:
                (other,) = ends - {node}
                if other not in reached:
                    reached.add(other)
                    carried[other] = pk
                    queue.append(other)
    return carried


def _merge_change(link: Link, keep: Any, other: Any | None, mode: Action) -> Change:
    """A link settled by the cluster's merge, in a pair merge's before/after shape. `other` is
    the member this link carries into `keep`; None for a link between two members merged
    through other links (its undo only reopens it)."""
    if isinstance(link, DrawerLink):
        return _merge_drawers(link, keep, other)
    return _merge_entities(link, keep, other, mode)


def _merge_drawers(link: DrawerLink, keep: Drawer, other: Drawer | None) -> Change:
    touched = _touches(link, keep)
    link.status = DrawerLink.Status.MERGED
    if other is None:
        return Change({"status": "open", "other": None}, {"status": link.status}, touched)
    return Change(*merge_drawer_into(keep, other, link.status), touched)


def _merge_entities(link: Link, keep: Entity, other: Entity | None, mode: Action) -> Change:
    touched = _touches(link, keep)
    alias = mode is Action.ADD_ALIAS
    link.status = EntityLinkModel.Status.ALIASED if alias else EntityLinkModel.Status.MERGED
    if other is None:
        return Change({"status": "open", "other": None}, {"status": link.status}, touched)
    kind = Entity.Redirect.ALIAS if alias else Entity.Redirect.MERGE
    return Change(*redirect_entity_into(keep, other, kind, link.status), touched)


def _touches(link: Link, keep: Any) -> list[str]:
    """The link's sides (older, newer, as a pair's) and the canonical member it merges into."""
    prefix = "drawer" if isinstance(link, DrawerLink) else "entity"
    sides = [f"{prefix}:{link.older_id}", f"{prefix}:{link.newer_id}"]
    return sides + ([f"{prefix}:{keep.pk}"] if f"{prefix}:{keep.pk}" not in sides else [])


def decide_cluster(
    *, cluster: str | ItemRef, choice: ClusterChoice, actor: Any, note: str = ""
) -> ClusterResult:
    """Decide a cluster at once, or refuse and change nothing."""
    ref = ItemRef.parse(cluster)
    if ref.is_proposal:
        raise NotFound("A sweep's proposal is not a cluster.", code="item_not_found")
    check_note(note)
    batch = uuid.uuid4()
    with transaction.atomic():
        found, links, members = _locked_cluster(ref, choice)
        _validate(choice, members, ref)
        by_pk = {row.pk: row for row in members.values()}
        keep = members[choice.canonical]
        group = {keep.pk} | {members[u].pk for u in choice.merge}
        distinct = {members[u].pk for u in choice.distinct}
        carried = _tree(keep.pk, group, links)
        stranded = group - {keep.pk} - set(carried)
        if stranded:
            raise InvalidInput(
                "A member to merge must be linked to the canonical one through merged members; "
                "merge the members between them too, or leave it open.",
                details={
                    "field": "merge",
                    "stranded": sorted(str(by_pk[pk].uuid) for pk in stranded),
                },
            )
        carrier = {pk: member for member, pk in carried.items()}
        decided = []
        for pk, link in links.items():
            ends = {link.older_id, link.newer_id}
            if ends <= group:
                other = by_pk[carrier[pk]] if pk in carrier else None
                change = _merge_change(link, keep, other, choice.mode)
                action = choice.mode if not ref.is_drawer else Action.MERGE
            elif ends & group and ends & distinct:
                change = DeleteLink().apply(link, canonical=None, actor=actor)
                action = Action.DELETE_LINK
            else:
                continue
            if action is not Action.DELETE_LINK:
                link.mark_decided(actor)
                link.save(update_fields=DECIDED_FIELDS)
            evidence = link_evidence(link)
            decided.append(
                _record(ref, ItemRef(ref.kind, pk), action, change, actor, note, batch, evidence)
            )
    return ClusterResult(str(found.ref), batch, decided, len(group) - 1, len(distinct))


def _record(
    cluster: ItemRef,
    ref: ItemRef,
    action: Action,
    change: Change,
    actor: Any,
    note: str,
    batch: uuid.UUID,
    evidence: dict[str, Any],
) -> AuditEntry:
    return AuditEntry.objects.record(
        actor=actor,
        action=AuditAction.decision(action),
        target_type=ITEM_TARGET,
        target_id=ref,
        before=change.before,
        after=change.after,
        data={
            "item": str(ref),
            "link_model": "DrawerLink" if ref.is_drawer else "EntityLink",
            "touches": change.touches,
            "note": note,
            "cluster": str(cluster),
            # Built here, from what the server holds, not sent by the browser: the link's, as a
            # pair's decision records it, and the cluster it was decided in.
            "evidence": {**evidence, "via": "cluster", "cluster": str(cluster)},
        },
        batch=batch,
    )
