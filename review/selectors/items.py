"""One review item with everything a curator needs to decide it: both sides, their differences,
the other links of each side, and the last decision."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from dedup import policy
from dedup.invisible import hidden_characters
from dedup.policy.merge_gates import text_differences
from dedup.policy.word_flags import WordFlag
from palace import selectors as palace_selectors
from palace.models import AuditEntry, DrawerLink, Entity, EntityLink, Mention
from review.diff import Segment, side_by_side
from review.items import ItemKind, ItemRef
from review.models import Proposal
from review.selectors.audit import last_decision

SAMPLE_MENTIONS = 3


@dataclass
class DrawerItem:
    ref: ItemRef
    link: DrawerLink
    left: list[Segment]
    right: list[Segment]
    numbers_left: list[str]
    numbers_right: list[str]
    other_links: dict[int, list[DrawerLink]]
    mentions: dict[int, list[Mention]]
    last_decision: AuditEntry | None
    word_flags: list[WordFlag] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)  # `hidden_characters` of both texts


@dataclass
class EntityItem:
    ref: ItemRef
    link: EntityLink
    distance: int
    samples: dict[int, list[Mention]]
    other_candidates: dict[int, list[EntityLink]]
    last_decision: AuditEntry | None


@dataclass
class ProposalItem:
    ref: ItemRef
    link: Proposal  # named like the links' for the shared templates
    left: list[Segment]
    right: list[Segment]
    numbers_left: list[str]
    numbers_right: list[str]
    last_decision: AuditEntry | None
    word_flags: list[WordFlag] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)


def _other_links(link: DrawerLink | EntityLink, pair: tuple[int, int]) -> dict[int, list]:
    """The other links of each side of a pair (one query)."""
    others = (
        type(link)
        .objects.filter(Q(newer_id__in=pair) | Q(older_id__in=pair))
        .exclude(pk=link.pk)
        .select_related("newer", "older")
    )
    by_side: dict[int, list] = {pk: [] for pk in pair}
    for other in others:
        for pk in pair:
            if pk in (other.newer_id, other.older_id):
                by_side[pk].append(other)
    return by_side


def item_detail(ref: ItemRef) -> DrawerItem | EntityItem | ProposalItem | None:
    detail = {
        ItemKind.PROPOSAL: _proposal_detail,
        ItemKind.DRAWER: _drawer_detail,
        ItemKind.ENTITY: _entity_detail,
    }[ref.kind]
    return detail(ref)


def _proposal_detail(ref: ItemRef) -> ProposalItem | None:
    proposal = Proposal.objects.select_related("run").filter(pk=ref.pk).first()
    if proposal is None:
        return None
    older, newer = proposal.texts.get("older", ""), proposal.texts.get("newer", "")
    left, right = side_by_side(older, newer)
    # An entity sweep's texts are names: flagged by kind, not as other words.
    differences = text_differences(older, newer, other_words=not proposal.run.entities)
    return ProposalItem(
        ref,
        proposal,
        left,
        right,
        list(differences.numbers_left),
        list(differences.numbers_right),
        last_decision(ref),
        list(differences.words),
        hidden_characters(f"{older}\n{newer}"),
    )


def _drawer_detail(ref: ItemRef) -> DrawerItem | None:
    link = (
        DrawerLink.objects.select_related("newer__room__wing", "older__room__wing", "decided_by")
        .filter(pk=ref.pk)
        .first()
    )
    if link is None:
        return None
    pair = (link.older_id, link.newer_id)
    other_links = _other_links(link, pair)
    mentions: dict[int, list[Mention]] = {pk: [] for pk in pair}
    for mention in Mention.objects.filter(drawer_id__in=pair).select_related("entity"):
        mentions[mention.drawer_id].append(mention)
    left, right = side_by_side(link.older.content, link.newer.content)
    differences = text_differences(link.older.content, link.newer.content)
    return DrawerItem(
        ref,
        link,
        left,
        right,
        list(differences.numbers_left),
        list(differences.numbers_right),
        other_links,
        mentions,
        last_decision(ref),
        list(differences.words),
        hidden_characters(f"{link.older.content}\n{link.newer.content}"),
    )


def _entity_detail(ref: ItemRef) -> EntityItem | None:
    entities = (
        Entity.objects.select_related("redirect_to")  # "answers through" names it
        .prefetch_related("alias_set")
        .annotate(mention_count=palace_selectors.mention_count())
    )
    link = EntityLink.objects.select_related("decided_by").filter(pk=ref.pk).first()
    if link is None:
        return None
    by_id = {e.pk: e for e in entities.filter(pk__in=(link.older_id, link.newer_id))}
    link.older, link.newer = by_id[link.older_id], by_id[link.newer_id]
    pair = (link.older_id, link.newer_id)
    # The newest three mentions of each side: one query per side, whatever their numbers.
    samples = {
        pk: list(
            Mention.objects.filter(entity_id=pk)
            .select_related("drawer__room__wing")
            .order_by("-id")[:SAMPLE_MENTIONS]
        )
        for pk in pair
    }
    candidates = _other_links(link, pair)
    distance = policy.edit_distance(link.older.key, link.newer.key)
    return EntityItem(ref, link, distance, samples, candidates, last_decision(ref))


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
