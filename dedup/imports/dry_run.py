"""An import's dry run: each record checked by the write path (`drawer_check_at`), writing
nothing, a chunk at a time as an import writes them, so the bookkeeping an import does once a
chunk (the rooms the records name, the installation's key and the records' old ids) a dry run
does once a chunk too; what a record costs is its own check. Each record is checked against
the store as it is: the file's own earlier records are not seen."""

from __future__ import annotations

from dedup.errors import DomainError
from dedup.imports import formats
from dedup.imports.chunks import ChunkQueue, Tally, look_up_rooms, record_place
from dedup.imports.ids import record_ids
from dedup.services import drawer_check_at
from dedup.validation import clean_place_name, place_name
from palace.models import Import, Room, Wing


class ChunkChecker(ChunkQueue):
    """Checks an import's records in chunks, as `ChunkWriter` writes them."""

    def __init__(self, imported: Import, tally: Tally) -> None:
        super().__init__(imported, tally)  # its rooms: those that exist (a dry run makes none)
        self.wings: dict[str, Wing | None] = {}  # the stored wing of a name, once each

    def flush(self) -> None:
        """Check every queued record, in order."""
        records, self.pending = self.pending, []
        if not records:
            return
        look_up_rooms(records, self.rooms)
        rooms = [self.rooms.get(record_place(record)) for record in records]
        ids = record_ids(self.imported.format, records, rooms)
        for record, room, drawer_id in zip(records, rooms, ids, strict=True):
            try:
                check = drawer_check_at(
                    room=room or self._room_to_make(record),
                    **self.write_arguments(record, drawer_id),
                )
            except DomainError as error:
                self.tally.malformed(formats.Malformed(record.file, record.line, str(error)))
                continue
            self.tally.count(stored=check.would_store, linked=bool(check.similar))

    def _room_to_make(self, record: formats.Record) -> Room:
        """The room a record's write would create (unsaved), in the stored wing of its name if
        there is one, its names given as `rooms_get_or_create` gives a file's
        (`clean_place_name`, restored); DomainError for a name it refuses."""
        wing_name = place_name(record.wing, "wing")
        if wing_name not in self.wings:
            self.wings[wing_name] = Wing.objects.filter(name=wing_name).first()
        wing = self.wings[wing_name] or Wing(
            name=clean_place_name(wing_name, "wing", restored=True)
        )
        return Room(wing=wing, name=clean_place_name(record.room, "room", restored=True))
