"""What a merge made unseen holds back. A bulk decision merges (or aliases) pairs no curator
looked at one by one: a pair whose texts differ in a number, a date, a name or any other word
but a typo (`merge_gates.text_differences`; two entities' names, in numbers alone) is left open
instead, as an item's page warns of it and a cluster's page leaves it open. A wrong merge is
worse than a missed one."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dedup.errors import InvalidInput
from dedup.policy.merge_gates import name_differences, text_differences
from palace.models import DrawerLink, EntityLink
from review.items import Action, ItemKind, ItemRef

# The decisions that join two sides: the others (dismiss, delete the link, a proposal's
# judgement) lose no fact.
JOINING = (Action.MERGE, Action.ADD_ALIAS)


def held_back(link: Any, action: str) -> str:
    """Why `action` on a link, made unseen, is held back ("the texts differ in a word"), or ""
    when it may be made. Reads the link's two sides."""
    if action not in JOINING:
        return ""
    if isinstance(link, DrawerLink):
        return text_differences(link.older.content, link.newer.content).reason
    if isinstance(link, EntityLink):
        return name_differences(link.older.name, link.newer.name).reason
    return ""


def held_back_of(items: Iterable[str], action: str) -> dict[str, str]:
    """`held_back` for each of `items` (ids; a malformed or unknown one is left to the decision,
    which refuses it), by item: one query a kind of link."""
    if action not in JOINING:
        return {}
    refs = []
    for item in items:
        try:
            refs.append(ItemRef.parse(item))
        except InvalidInput:
            continue
    found: dict[str, str] = {}
    for kind, model in ((ItemKind.DRAWER, DrawerLink), (ItemKind.ENTITY, EntityLink)):
        pks = [ref.pk for ref in refs if ref.kind is kind]
        if not pks:
            continue
        links: Any = model.objects.filter(pk__in=pks).select_related("older", "newer")
        for link in links:
            if reason := held_back(link, action):
                found[str(ItemRef(kind, link.pk))] = reason
    return found
