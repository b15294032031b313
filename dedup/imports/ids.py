"""The drawer ids an import's records are written under, and the drawers a Castellan file's lines
name by the file's own ids.

A record's id is derived from its format, its wing and its id in the source, keyed with the
installation's key (`dedup.derived_ids`): importing the same file into the same wing again
replays every record and stores nothing, while no key, of this wing or another, can compute the
id beforehand (to take it first, so that the import refused the record) or ask whether a wing
holds a given record (a refusal, or the second of two wings importing one record being refused,
said so). The wing is the scope of a replay because it is what a key reaches: within it, two
rooms meeting on one id tell the key nothing it could not read.

Records imported before ids were keyed are under `legacy_client_id` (uuid5 of
`<format>:<source id>`); a record whose room holds its old id is written under that one again
(`record_ids`), so importing such a file again still stores nothing, superseded drawers included
(a write is never an exact copy of a superseded drawer), and a deleted one is still refused.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db.models import QuerySet

from dedup.derived_ids import derivation_key, derived_id, legacy_id, legacy_ids_here
from dedup.errors import DomainError
from dedup.imports import formats
from dedup.validation import lookup_form, place_name
from palace.models import Drawer, Import, Room

IMPORT_NAMESPACE = uuid.UUID("5b8f2c1e-9d1a-4f0e-8a52-3c0f6a1d7e42")


def client_id(format: str, wing: str, source_id: str, key: bytes | None = None) -> uuid.UUID:
    """The drawer id a source's record is written under in a wing (named as the write path
    finds it: `place_name`): the same record into the same wing, the same id, on this
    installation. `key`: the installation's (`derivation_key`), read now if not given."""
    key = derivation_key() if key is None else key
    return derived_id(key, IMPORT_NAMESPACE, format, wing, source_id)


def legacy_client_id(format: str, source_id: str) -> uuid.UUID | None:
    """The id a record was written under before ids were keyed and held the wing."""
    return legacy_id(IMPORT_NAMESPACE, f"{format}:{source_id}")


def record_id(format: str, record: formats.Record, key: bytes) -> uuid.UUID | None:
    """The record's client id; None when its wing is refused (and so is its write)."""
    try:
        wing = place_name(record.wing, "wing")
    except DomainError:
        return None
    return client_id(format, wing, record.source_id, key)


def record_ids(
    format: str, records: Sequence[formats.Record], rooms: Sequence[Room | None]
) -> list[uuid.UUID | None]:
    """Each record's drawer id, its room given when it exists: its client id, or its old one
    when that room holds it (see the module). The key, then the old ids, in one query each."""
    key = derivation_key()
    new = [record_id(format, record, key) for record in records]
    old = [legacy_client_id(format, record.source_id) for record in records]
    here = legacy_ids_here(
        (drawer_id, room)
        for drawer_id, room in zip(old, rooms, strict=True)
        if drawer_id is not None and room is not None
    )
    return [
        then if room is not None and (then, room.pk) in here else now
        for now, then, room in zip(new, old, rooms, strict=True)
    ]


@dataclass
class FileDrawers:
    """The drawers a Castellan file's lines (a mention, a `superseded_by`) name by the file's ids:
    the drawer holding each of its records, kept as the import writes them (the record's own, one
    stored before under its id, or an exact copy that held it), and for an id not in the file,
    one an earlier import stored under it, in the import's wings only (those its records name,
    `import_create`; the wings written to, for an import that recorded none)."""

    imported: Import
    held: dict[str, int] = field(default_factory=dict)
    wings: set[str] = field(default_factory=set)
    key: bytes | None = None  # the installation's, read at the first id not in the file

    def hold(self, record: formats.Record, drawer: Drawer) -> None:
        """The drawer now holding a record the write path took (so its wing is a label)."""
        self.held[record.source_id] = drawer.pk
        self.wings.add(place_name(record.wing, "wing"))

    def named(self, file_id: str) -> QuerySet[Drawer]:
        held = self.held.get(file_id)
        if held is not None:
            return Drawer.objects.filter(pk=held)
        recorded = self.imported.options.get("wings") or []
        # Found as the write path finds them (an import recorded before names were composed
        # holds them as its file wrote them).
        wings = sorted({lookup_form(wing) for wing in recorded} or self.wings)
        if self.key is None:
            self.key = derivation_key()
        ids = [client_id(self.imported.format, wing, file_id, self.key) for wing in wings]
        old = legacy_client_id(self.imported.format, file_id)
        drawers = Drawer.objects.filter(uuid__in=[*ids, *([old] if old else [])])
        if recorded:
            drawers = drawers.filter(room__wing__name__in=wings)
        return drawers.order_by("pk")
