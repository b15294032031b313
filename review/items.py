"""The vocabulary every part of review shares: what an item is, the decisions it takes, and how a
decision is refused. Imports nothing of review, so anything in review may import it.

An item is a `similar_to` drawer link ("d<id>"), a `possibly_same_as` entity link ("e<id>") or a
sweep's proposal ("p<id>").
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from dedup.errors import Conflict, DomainError, InvalidInput
from palace.models import DECISION_PREFIX, AuditAction, AuditTarget, DrawerLink, EntityLink

REVERT_ACTION = AuditAction.REVIEW_REVERT
ITEM_TARGET = AuditTarget.REVIEW_ITEM


class ItemKind(enum.StrEnum):
    """The kinds of item, by the letter of their id. Declared in the queue's tie-break order:
    among items with equal sort keys, drawer links come first, then entity links, then
    proposals."""

    DRAWER = "d"
    ENTITY = "e"
    PROPOSAL = "p"

    @property
    def queue_order(self) -> int:
        return list(ItemKind).index(self)


class Action(enum.StrEnum):
    ADD_ALIAS = "add_alias"
    MERGE = "merge"
    DELETE_LINK = "delete_link"
    DISMISS = "dismiss"
    # Judgements of a sweep's proposal (sampled for precision): nothing is applied.
    SAME = "same"
    WRONG = "wrong"

    @property
    def label(self) -> str:
        """The console's words for it: its button's label (templates/review/_item.html)."""
        return _LABELS[self]


_LABELS = {
    Action.ADD_ALIAS: "Add alias",
    Action.MERGE: "Merge",
    Action.DELETE_LINK: "Delete link",
    Action.DISMISS: "Dismiss",
    Action.SAME: "The same",
    Action.WRONG: "Not the same",
}


def done_words(action: str) -> str:
    """A decision's action (as audited: `review.add_alias`) in the console's words: its
    button's ("add alias"), a judgement's as one ("judged not the same", not "wrong")."""
    code = action.removeprefix(DECISION_PREFIX)
    if code not in Action.__members__.values():
        return code.replace("_", " ")
    words = Action(code).label.lower()
    return f"judged {words}" if code in (Action.SAME, Action.WRONG) else words


DRAWER_ACTIONS = (Action.MERGE, Action.DELETE_LINK, Action.DISMISS)
ENTITY_ACTIONS = (Action.ADD_ALIAS, Action.MERGE, Action.DELETE_LINK, Action.DISMISS)
PROPOSAL_ACTIONS = (Action.SAME, Action.WRONG)
ACTIONS_BY_KIND = {
    ItemKind.DRAWER: DRAWER_ACTIONS,
    ItemKind.ENTITY: ENTITY_ACTIONS,
    ItemKind.PROPOSAL: PROPOSAL_ACTIONS,
}


class InvalidAction(DomainError):
    """An action the item does not take. `details` hold what was asked ("action") and the
    actions the item takes ("offered"), for an interface to word it in its own terms."""

    code = "invalid_action"


class AlreadyDecided(Conflict):
    code = "already_decided"


class RevertBlocked(Conflict):
    code = "revert_blocked"


_ITEM_ID = re.compile(r"([dep])([1-9][0-9]{0,17})")


@dataclass(frozen=True)
class ItemRef:
    """A queue item: "d12" is drawer link 12, "e7" entity link 7, "p3" a sweep's proposal 3."""

    kind: ItemKind
    pk: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ItemKind(self.kind))

    def __str__(self) -> str:
        return f"{self.kind}{self.pk}"

    @property
    def is_drawer(self) -> bool:
        return self.kind is ItemKind.DRAWER

    @property
    def is_proposal(self) -> bool:
        return self.kind is ItemKind.PROPOSAL

    @property
    def actions(self) -> tuple[Action, ...]:
        return ACTIONS_BY_KIND[self.kind]

    @classmethod
    def parse(cls, value: object) -> ItemRef:
        if isinstance(value, ItemRef):
            return value
        match = _ITEM_ID.fullmatch(str(value))
        if not match:
            raise InvalidInput(
                "An item id is 'd' (drawer link), 'e' (entity link) or 'p' (a sweep's proposal) "
                "and a number, like d12.",
                code="invalid_id",
            )
        return cls(ItemKind(match[1]), int(match[2]))

    @classmethod
    def of(cls, link: object) -> ItemRef:
        if isinstance(link, DrawerLink):
            return cls(ItemKind.DRAWER, link.pk)
        kind = ItemKind.ENTITY if isinstance(link, EntityLink) else ItemKind.PROPOSAL
        return cls(kind, link.pk)  # type: ignore[attr-defined]


MAX_NOTE = 2000  # characters of a curator's note on a decision or a revert


def check_note(note: object) -> None:
    """A note on a decision or a revert is text of at most MAX_NOTE characters (InvalidInput)."""
    if not isinstance(note, str) or len(note) > MAX_NOTE:
        raise InvalidInput(
            f"note must be text of at most {MAX_NOTE:,} characters.", details={"field": "note"}
        )
