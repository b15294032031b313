"""Wings and rooms whose names look alike but are stored apart (`manage.py name_twins`).

A new wing or room is given its name by `label_form` (composed, NFC, without the characters that
show nothing), and api 0002 (and 0003 and 0004, for a joiner, a variation selector or the Braille
blank that changed nothing drawn, 0004 beside a CJK letter) gave every wing and room stored
before that name, unless another held it already: "cafe\u0301" (decomposed) created before,
and "café" created beside it by a write that did not find it; "alpha\u200d" beside "alpha".
Such twins are left apart, since joining them moves drawers between wings or rooms, a curator's
decision; this lists them, so that one can be moved into the other (the admin moves a room to
another wing) or renamed. Nothing is changed here.

Rows are read once, by id, in chunks; only the names that are not in their composed form are kept
in memory, and the composed names they would take are looked up in batches.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice

from dedup.validation import label_form
from palace.models import Room, Wing

CHUNK_SIZE = 2000
LOOKUP_BATCH = 500


@dataclass(frozen=True)
class Twins:
    """Two or more wings (or rooms of one wing) whose names compose to `name`: (id, the name
    stored), oldest first. `wing` is the rooms' wing's name ("" for wings)."""

    kind: str
    wing: str
    name: str
    rows: tuple[tuple[int, str], ...]

    def describe(self) -> str:
        where = f" in wing {self.wing!r}" if self.kind == "room" else ""
        rows = ", ".join(f"{stored!a} (id {pk})" for pk, stored in self.rows)
        return f"{self.kind} {self.name!r}{where}: {rows}"


def place_twins() -> list[Twins]:
    """Every group of look-alike wings, then of look-alike rooms (wing by wing)."""
    return [*_wing_twins(), *_room_twins()]


def _batches(items: Iterable, size: int = LOOKUP_BATCH) -> Iterator[list]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def _wing_twins() -> list[Twins]:
    apart: dict[str, list[tuple[int, str]]] = {}
    rows = Wing.objects.order_by("pk").values_list("pk", "name")
    for pk, name in rows.iterator(chunk_size=CHUNK_SIZE):
        composed = label_form(name)
        if composed and composed != name:
            apart.setdefault(composed, []).append((pk, name))
    for batch in _batches(apart):
        for pk, name in Wing.objects.filter(name__in=batch).values_list("pk", "name"):
            apart[name].append((pk, name))
    return [
        Twins("wing", "", name, tuple(sorted(found)))
        for name, found in sorted(apart.items())
        if len(found) > 1
    ]


def _room_twins() -> list[Twins]:
    apart: dict[tuple[int, str], list[tuple[int, str]]] = {}
    wings: dict[int, str] = {}
    rows = Room.objects.order_by("pk").values_list("pk", "wing_id", "wing__name", "name")
    for pk, wing_id, wing_name, name in rows.iterator(chunk_size=CHUNK_SIZE):
        composed = label_form(name)
        if composed and composed != name:
            apart.setdefault((wing_id, composed), []).append((pk, name))
            wings[wing_id] = wing_name
    for batch in _batches(apart):
        held = Room.objects.filter(
            wing_id__in={wing for wing, _ in batch}, name__in={name for _, name in batch}
        ).values_list("pk", "wing_id", "name")
        for pk, wing_id, name in held:
            if (wing_id, name) in apart:
                apart[wing_id, name].append((pk, name))
    twins = [
        Twins("room", wings[wing_id], name, tuple(sorted(found)))
        for (wing_id, name), found in apart.items()
        if len(found) > 1
    ]
    return sorted(twins, key=lambda twin: (twin.wing, twin.name))
