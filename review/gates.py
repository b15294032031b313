"""What a sweep proposes and when a proposal may be merged: the tiers a sweep finds and the
gates a drawer pair must pass. Shared by the sweep's writes and its reads."""

from __future__ import annotations

from collections.abc import Iterable

from dedup.errors import InvalidInput
from palace.models import Drawer
from review.diff import differing_numbers

DRAWER_TIERS = ("exact", "normalized", "near")
ENTITY_TIERS = ("exact", "normalized", "alias", "typo", "possible")
MERGE_TIERS = ("exact", "normalized")
GATES = ("same_kind", "same_entities", "numbers_differ")  # a drawer pair's (`drawer_gates`)
TIERS = tuple(sorted({*DRAWER_TIERS, *ENTITY_TIERS}))  # a tier of either kind of sweep


def tiers_chosen(tiers: Iterable[str] | None, *, entities: bool) -> set[str]:
    """The tiers an application of a sweep covers: those named, or every tier of the sweep's
    kind when none is named (None). Refused when a name is no tier of the sweep's kind (a typo, or
    an entity tier on a drawer sweep, would otherwise apply nothing, "in a tier not chosen") or
    the list is empty (which would apply every tier)."""
    kind = ENTITY_TIERS if entities else DRAWER_TIERS
    if tiers is None:
        return set(kind)
    chosen = set(tiers)
    unknown = sorted(chosen - set(kind))
    sweep = "an entity sweep" if entities else "a drawer sweep"
    if unknown:
        raise InvalidInput(
            f"tiers: {sweep} has no tier {', '.join(unknown)}; its tiers are {', '.join(kind)}.",
            details={"field": "tiers"},
        )
    if not chosen:
        raise InvalidInput(
            f"tiers: name at least one of {', '.join(kind)} (or leave tiers out for every tier).",
            details={"field": "tiers"},
        )
    return chosen


def drawer_gates(
    newer: Drawer, older: Drawer, newer_entities: set[int], older_entities: set[int]
) -> dict[str, bool | None]:
    """Each gate is True (passed), False (failed) or None (does not apply)."""
    only_older, only_newer = differing_numbers(older.content, newer.content)
    return {
        # An event and the state it produced are not duplicates.
        "same_kind": (newer.kind == older.kind) if newer.kind and older.kind else None,
        # The same words about different people are not duplicates.
        "same_entities": (newer_entities == older_entities)
        if newer_entities and older_entities
        else None,
        "numbers_differ": bool(only_older or only_newer),
    }


def gates_pass(gates: dict) -> bool:
    return (
        gates.get("same_kind") is not False
        and gates.get("same_entities") is not False
        and not gates.get("numbers_differ")
    )
