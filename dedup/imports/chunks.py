"""Writing an import's records, a chunk at a time.

Every record still goes through the write path (`drawer_write`), in file order, each in its own
savepoint, so a record the write path refuses rolls back alone and is counted as malformed. What
is done once per chunk instead of once per record is the import's bookkeeping: one transaction
(its commit), the import's rows for the drawers and links it stored (one bulk insert each), its
progress, and the look-up of the rooms the records name (kept for the whole import). The
chunk's write locks are taken up front in the canonical order (`hold_write_locks`), as a
checkpoint's are, so a chunk and any other writer never wait on each other in a cycle. Holding
them, the chunk asks whether its rooms are still there: an empty room deleted since it was
looked up (by an admin, or another import's reversal removing the places it made) is forgotten,
the chunk rolls back before writing anything, and its records are written again, those of the
room gone as records of a new place, which make it again (as `drawer_write_in` makes one write
again).

Each record is written under its drawer id (`dedup.imports.ids.record_ids`: keyed, its wing's,
or the one it was imported under before ids were keyed), the key and the old ids read once per
chunk, in its transaction.

A record whose room does not exist yet is written alone in its own transaction
(`drawer_write_in`), which creates the wing and room (locks first, in their order) and leaves none
behind if the write is refused; the chunk's records before it are committed first, so the records
stay in file order.

A chunk holds its locks (on SQLite, the database's write lock) until it commits: at most
CHUNK_SIZE writes, a fraction of a second, which other writers wait through.

Each chunk first holds the import's own row and goes on only while the import is running
(`hold_running`): a reversal holds that row too, first, so an import reversed while it runs (its
worker stopped, or a person cancelling it) writes no chunk after the reversal, and the reversal
removes every chunk written before it. The row comes before any write lock, in every transaction
that takes both, so the two never wait on each other in a cycle.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from django.db import connection, transaction

from dedup import maintenance
from dedup.errors import DomainError
from dedup.imports import formats
from dedup.imports.ids import FileDrawers, record_ids
from dedup.locks import drawers_locked
from dedup.services import WriteMode, drawer_write, drawer_write_in
from dedup.services.drawers import DrawerWrite, hold_write_locks
from dedup.services.rooms import Place, rooms_named
from dedup.validation import place_name
from palace.models import Drawer, Import, Room

CHUNK_SIZE = 100


class Supersession(NamedTuple):
    """A Castellan drawer the file says was superseded (`valid_to`, `superseded_by`), applied
    once every drawer is written; its line, for a refusal."""

    drawer_id: uuid.UUID
    data: dict[str, Any]
    file: str
    line: int


class _RoomsGone(Exception):
    """Rooms a chunk's records were to be written into were deleted since they were looked up:
    the chunk's transaction rolls back, having written nothing."""


class ImportStopped(Exception):
    """The import is no longer running (it was reversed): write nothing more."""


def hold_running(imported: Import) -> None:
    """Hold the import's row until the transaction ends, and raise ImportStopped unless the
    import is still running. Call it first in the transaction."""
    status = (
        # FOR NO KEY UPDATE: its own reversal (FOR UPDATE) waits for the chunk, but another's,
        # handing this import a drawer, refers to the row (FOR KEY SHARE) and must not, since
        # it holds the rooms' writes this chunk waits for.
        Import.objects.select_for_update(no_key=True)
        .filter(pk=imported.pk)
        .values_list("status", flat=True)
        .first()
    )
    if status != Import.Status.RUNNING:
        raise ImportStopped(f"import {imported.pk} is {status or 'deleted'}")


# The malformed records an import keeps, with file, line and why, in file order; the summary
# counts every one. A file of a million bad lines had stored (and answered on every poll of
# `GET /api/imports/{id}`) a list of a million, 100 MB.
MALFORMED_KEPT = 100


@dataclass
class Tally:
    files: set[str] = field(default_factory=set)
    records: int = 0
    created: int = 0
    exact: int = 0
    similar: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)  # the first MALFORMED_KEPT
    malformed_records: int = 0
    stopped: bool = False  # reversed while it ran: what it wrote is gone
    # Every record read, malformed or not, a drawer or another of a Castellan file's lines:
    # what the progress counts (`files.records_in` counts them before).
    read: int = 0

    def summary(self) -> dict[str, int]:
        return {
            "files": len(self.files),
            "records": self.records,
            "created": self.created,
            "exact": self.exact,
            "similar": self.similar,
            "malformed": self.malformed_records,
        }

    def malformed(self, problem: formats.Malformed) -> None:
        self.malformed_records += 1
        if len(self.errors) < MALFORMED_KEPT:
            self.errors.append(problem.as_dict())

    def count(self, *, stored: bool, linked: bool) -> None:
        if not stored:
            self.exact += 1
            return
        self.created += 1
        self.similar += int(linked)


class ChunkQueue:
    """Takes an import's records one by one and hands them to `flush` a chunk at a time, where
    the rooms they name are looked up together (`rooms`, kept for the import)."""

    def __init__(self, imported: Import, tally: Tally) -> None:
        self.imported = imported
        self.tally = tally
        self.rooms: dict[Place, Room] = {}
        self.pending: list[formats.Record] = []

    def add(self, record: formats.Record) -> bool:
        """Queue a record; True when that handled a chunk."""
        self.pending.append(record)
        if len(self.pending) < CHUNK_SIZE:
            return False
        self.flush()
        return True

    def flush(self) -> None:  # pragma: no cover - each kind of queue has its own
        raise NotImplementedError

    def write_arguments(self, record: formats.Record, drawer_id: uuid.UUID | None) -> dict:
        """What the write path is given for a record (written, or checked by a dry run)."""
        return {
            "content": record.content,
            "mode": WriteMode.MEMORY,
            "name": record.name,
            "kind": record.kind,
            **self._agent_and_source(record),
            "drawer_id": drawer_id,
        }

    def _agent_and_source(self, record: formats.Record) -> dict[str, Any]:
        """The agent a record is written as: the one it names, unless the import's own agent
        writes every record (an agent's key imports as itself; the named one is kept in the
        source, as provenance)."""
        options = self.imported.options or {}
        own = options.get("agent", "")
        if not options.get("agent_only") or record.agent in ("", own):
            return {"agent": record.agent or own, "source": record.source}
        return {"agent": own, "source": {**record.source, "agent": record.agent}}


class ChunkWriter(ChunkQueue):
    """Writes an import's records in chunks (see the module)."""

    def __init__(self, imported: Import, tally: Tally) -> None:
        super().__init__(imported, tally)
        self.supersessions: list[Supersession] = []
        self.written = 0
        # The drawer holding each record, so a Castellan file's own lines about it (a mention,
        # a `superseded_by`) reach it: the one written, replayed, or holding it already (an
        # exact copy of a drawer under another id). Only a Castellan file's lines name drawers.
        self.file_drawers = FileDrawers(imported)
        self.names_drawers = imported.format == Import.Format.CASTELLAN

    def flush(self) -> None:
        """Write every queued record, in order."""
        records, self.pending = self.pending, []
        if not records:
            return
        look_up_rooms(records, self.rooms)
        self._write_in_order(records)
        maintenance.analysed_if_grown()  # the plans follow the tables as they grow

    def _write_in_order(self, records: list[formats.Record]) -> None:
        """The records in runs of those whose rooms are known, each run one transaction; the
        first record of a new place alone, creating its room."""
        run: list[formats.Record] = []
        for record in records:
            if record_place(record) in self.rooms:
                run.append(record)
                continue
            self._commit(run)
            run = []
            self._commit([record])
        self._commit(run)

    def _commit(self, records: list[formats.Record]) -> None:
        if not records:
            return
        try:
            self._commit_run(records)
        except _RoomsGone:
            # Rolled back before any record was written or counted: the records whose rooms
            # went are now records of new places, each written alone, making its room again.
            self._write_in_order(records)

    def _commit_run(self, records: list[formats.Record]) -> None:
        drawers: list[int] = []
        links: list[int] = []
        found: list[int] = []
        with transaction.atomic():
            hold_running(self.imported)
            hold_write_locks(
                (self.rooms[record_place(r)], r.content, r.name)
                for r in records
                if record_place(r) in self.rooms
            )
            self._forget_rooms_gone(records)
            rooms = [self.rooms.get(record_place(record)) for record in records]
            ids = record_ids(self.imported.format, records, rooms)
            for record, drawer_id in zip(records, ids, strict=True):
                result = self._write(record, drawer_id)
                if result is not None and result.created:
                    drawers.append(result.drawer.pk)
                    links.extend(link.pk for link in result.links)
                elif result is not None:
                    found.append(result.drawer.pk)
            self._keep(drawers, links, len(records))
            self._keep_found(found, own=set(drawers))

    def _forget_rooms_gone(self, records: list[formats.Record]) -> None:
        """Raise _RoomsGone, having forgotten them, if rooms the records were to be written into
        were deleted since they were looked up (an empty room, by an admin or another import's
        reversal): a drawer written into one would fail the foreign key at commit, and the
        import with it. Asked once the rooms' writes are held, which a deletion holds too
        (`room_delete`): one deleted before is seen gone (each statement reads what was
        committed before it), one not deleted yet waits for this chunk, and finds drawers."""
        wanted = {self.rooms[record_place(r)].pk for r in records if record_place(r) in self.rooms}
        there = set(Room.objects.filter(pk__in=wanted).values_list("pk", flat=True))
        if wanted <= there:
            return
        # Every place that names a room gone, this chunk's or not ("ops" and " ops" name one).
        gone = [place for place, room in self.rooms.items() if room.pk in wanted - there]
        for place in gone:
            del self.rooms[place]
        raise _RoomsGone(gone)

    def _keep(self, drawers: list[int], links: list[int], records: int) -> None:
        """The import's record of what it stored, how far it got and what it counted, in the
        chunk's transaction: an import that fails or is stopped shows what it committed."""
        pk = self.imported.pk
        Import.drawers.through.objects.bulk_create(
            [Import.drawers.through(import_id=pk, drawer_id=drawer) for drawer in drawers]
        )
        Import.links.through.objects.bulk_create(
            [Import.links.through(import_id=pk, drawerlink_id=link) for link in links]
        )
        self.written += records
        summary = {**self.tally.summary(), "records": self.written}
        Import.objects.filter(pk=pk).update(progress=self.written, summary=summary)
        self.imported.progress = self.written

    def _keep_found(self, found: list[int], *, own: set[int]) -> None:
        """Record the drawers the chunk's records found stored that the import did not create
        itself (its own, in this chunk or an earlier one, replayed when it resumes, are not
        found): reversing the import that created one hands it over to this one."""
        if not found:
            return
        if connection.vendor == "postgresql":  # held until commit, as a row that refers to them
            there = drawers_locked(found)  # must be (one deleted meanwhile is found no more)
            found = [drawer for drawer in found if drawer in there]
        pk = self.imported.pk
        own |= set(
            Import.drawers.through.objects.filter(import_id=pk, drawer_id__in=found).values_list(
                "drawer_id", flat=True
            )
        )
        Import.found.through.objects.bulk_create(
            [
                Import.found.through(import_id=pk, drawer_id=drawer)
                for drawer in dict.fromkeys(found)
                if drawer not in own
            ],
            ignore_conflicts=True,  # found again (a record twice in the file, or a resume)
        )

    def _write(self, record: formats.Record, drawer_id: uuid.UUID | None) -> DrawerWrite | None:
        """One record through the write path, in a savepoint, under its drawer id (None: its
        wing is refused, and so is the write); None when it is refused."""
        write = {
            **self.write_arguments(record, drawer_id),
            "restates": False,  # what it finds is kept as `Import.found` instead
        }
        room = self.rooms.get(record_place(record))
        try:
            if room is None:  # a file's "/" kept (a backup restores whole), "*" and "," not
                result = drawer_write_in(wing=record.wing, room=record.room, as_named=True, **write)
                self.rooms[record_place(record)] = result.drawer.room
            else:
                result = drawer_write(room=room, **write)
        except DomainError as error:
            self.tally.malformed(formats.Malformed(record.file, record.line, str(error)))
            return None
        self.tally.count(stored=result.created, linked=bool(result.links))
        if self.names_drawers:
            self.file_drawers.hold(record, result.drawer)
        if result.created:
            _keep_valid_from(result.drawer, record.data.get("valid_from"))
            if record.data.get("valid_to") or record.data.get("superseded_by"):
                self.supersessions.append(
                    Supersession(result.drawer.uuid, record.data, record.file, record.line)
                )
        return result


def _keep_valid_from(drawer: Drawer, valid_from: Any) -> None:
    """A Castellan record keeps the time its memory became valid in the store it came from."""
    when = formats.parse_when(valid_from)
    if when is not None:
        Drawer.objects.filter(pk=drawer.pk).update(valid_from=when)


def look_up_rooms(records: list[formats.Record], rooms: dict[Place, Room]) -> None:
    """Add to `rooms` (keyed by the names as records give them, `record_place`) those the
    records name that exist, in one query."""
    wanted: dict[Place, Place] = {}
    for record in records:
        place = record_place(record)
        if place in rooms or place in wanted:
            continue
        try:
            wanted[place] = (place_name(record.wing, "wing"), place_name(record.room, "room"))
        except DomainError:
            continue  # the write path refuses it, with its error
    found = rooms_named(set(wanted.values()))
    rooms.update({place: found[names] for place, names in wanted.items() if names in found})


def record_place(record: formats.Record) -> Place:
    return (record.wing, record.room)
