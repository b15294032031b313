"""Mining: file text and Markdown documents into a room, one drawer per chunk.

Nothing is deduplicated away (two identical files are two records); each chunk goes through
the write path in mined mode, so it is linked to what it resembles. A chunk's id is derived from
the wing and room, the file, its position and its text, keyed with the installation's key
(`dedup.derived_ids`: no key can compute it to take it first, which stopped the run, nor ask
whether a wing holds a given text), so mining unchanged files again is a replay that stores
nothing; chunks that a changed file no longer contains are superseded. A chunk mined before ids
were keyed keeps its old id (uuid5 of the same parts) where its room holds it, so mining again
after the upgrade stores nothing new either, and supersedes nothing. So does a chunk mined before
its room or wing was renamed (by `api/0002` or `api/0003`, which gave stored names the form a
write gives them, or by a curator) or its room moved: its room holds it under the id its former
names derive (`former_names`), which mining again uses.

A file that is not UTF-8 text, or holds a chunk the write path would refuse (a NUL byte), is
skipped whole, with a warning naming it. The room is created with the first chunk stored in it,
so a run that stores nothing leaves no empty wing or room behind.
"""

from __future__ import annotations

import hashlib
import logging
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dedup import services
from dedup.derived_ids import (
    SEPARATOR,
    derivation_key,
    derived_id,
    former_names,
    legacy_id,
    legacy_ids_here,
)
from dedup.errors import DomainError
from dedup.services.rooms import Place, rooms_named
from dedup.validation import clean_content, place_name
from palace.models import AuditAction, AuditEntry, AuditTarget, Drawer, Room

logger = logging.getLogger("castellan.mining")

EXTENSIONS = {".txt", ".md", ".markdown"}
CHUNK_CHARS = 1500
MINING_NAMESPACE = uuid.UUID("0d8a3f5e-5b7e-4a53-9a5e-8f0f4a1c2b37")
DEFAULT_ROOM = "documents"  # when the mined path has no folder name to file under
MINED_SOURCE_KIND = "mined"  # a mined chunk's `source["kind"]`, which finds its file's chunks again
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


@dataclass
class MiningResult:
    documents: int = 0
    created: int = 0
    similar: int = 0
    unchanged: int = 0
    superseded: int = 0
    skipped: int = 0
    deleted: int = 0  # chunks a curator deleted since they were mined: not mined back

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def documents_under(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if path.suffix.lower() in EXTENSIONS else []
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in EXTENSIONS)


def chunks(text: str, *, size: int = CHUNK_CHARS) -> Iterator[str]:
    """Paragraphs packed into chunks of at most `size` characters; a longer paragraph is cut at
    line ends, then hard."""
    pending = ""
    for paragraph in (p.strip() for p in _PARAGRAPH_BREAK.split(text)):
        if not paragraph:
            continue
        pieces = [paragraph] if len(paragraph) <= size else list(_cut(paragraph, size))
        for piece in pieces:
            if pending and len(pending) + 2 + len(piece) > size:
                yield pending
                pending = ""
            pending = f"{pending}\n\n{piece}" if pending else piece
    if pending:
        yield pending


def _cut(paragraph: str, size: int) -> Iterator[str]:
    line_buffer = ""
    for line in paragraph.splitlines():
        while len(line) > size:
            if line_buffer:
                yield line_buffer
                line_buffer = ""
            yield line[:size]
            line = line[size:]
        if line_buffer and len(line_buffer) + 1 + len(line) > size:
            yield line_buffer
            line_buffer = ""
        line_buffer = f"{line_buffer}\n{line}" if line_buffer else line
    if line_buffer:
        yield line_buffer


def place_of(path: Path, *, wing: str, room: str | None = None) -> Place:
    """The wing and room a path is mined into (the room, when not given, is the folder's name),
    checked as the write path checks every wing and room: refused (a DomainError) before
    anything is read or written."""
    path = path.resolve()
    base = path if path.is_dir() else path.parent
    if room is None:
        room = base.name or DEFAULT_ROOM
    return place_name(wing, "wing"), place_name(room, "room")


def mine(
    path: Path,
    *,
    wing: str,
    room: str | None = None,
    on_document: Callable[[Path], object] = lambda _: None,
) -> MiningResult:
    path = path.resolve()
    base = path if path.is_dir() else path.parent
    target = _Target(place_of(path, wing=wing, room=room))
    result = MiningResult()
    for document in documents_under(path):
        relative = document.relative_to(base).as_posix()
        try:
            text = document.read_text(encoding="utf-8")
            _check_chunks(text)
        except (UnicodeDecodeError, OSError, DomainError) as error:
            logger.warning("skipped %s: %s", relative, error)
            result.skipped += 1
            on_document(document)
            continue
        result.documents += 1
        _mine_document(target, relative, text, document.stat().st_mtime, result)
        on_document(document)
    return result


def _check_chunks(text: str) -> None:
    """Refuse a document whose chunks the write path would refuse (a NUL byte, which UTF-8
    decodes), before any of them is written: a document is mined whole or skipped whole."""
    for chunk in chunks(text):
        clean_content(chunk)


class _Target:
    """The room mined into, created with the first chunk stored in it: a run that stores
    nothing (every document skipped, or none found) leaves no empty wing or room behind."""

    def __init__(self, place: Place) -> None:
        self.wing, self.room_name = place
        self.room: Room | None = rooms_named({place}).get(place)
        # The names it was mined into under before, renamed since (`former_names`); a room made
        # by this run has none.
        self.former = sorted(former_names(self.room)) if self.room is not None else []

    def write(self, **write: Any) -> services.DrawerWrite:
        if self.room is not None:
            return services.drawer_write(room=self.room, **write)
        # One transaction creates the room and writes the chunk, so a refused chunk leaves no
        # room behind (as an import's first record in a new place).
        written = services.drawer_write_in(wing=self.wing, room=self.room_name, **write)
        self.room = written.drawer.room
        return written


def _chunk_ids(target: _Target, relative: str, pieces: list[str]) -> list[uuid.UUID]:
    """Each chunk's drawer id: keyed under the names mined into (`derived_id`), unless its room
    holds the chunk under the id it was mined under before: keyed under a name the room or its
    wing had then (`former_names`: renamed since by `api/0002`, `api/0003` or a curator, or
    moved), or, before ids were keyed, unkeyed (`legacy_ids_here`)."""
    key = derivation_key()
    facts = [
        (relative, str(i), hashlib.sha256(p.encode()).hexdigest()) for i, p in enumerate(pieces)
    ]
    new = _unclaimed(key, target, facts)
    if target.room is None:  # a room not made yet holds no chunk mined before
        return new
    room = target.room
    names = [(target.wing, target.room_name), *target.former]
    renamed = [[derived_id(key, MINING_NAMESPACE, *n, *f) for n in target.former] for f in facts]
    old = [[legacy_id(MINING_NAMESPACE, SEPARATOR.join((*n, *f))) for n in names] for f in facts]
    held = _held_in(room, [drawer_id for ids in renamed for drawer_id in ids])
    here = legacy_ids_here((i, room) for ids in old for i in ids if i is not None)
    return [
        next((then for then in keyed if then in held), None)
        or next((then for then in unkeyed if then is not None and (then, room.pk) in here), now)
        for now, keyed, unkeyed in zip(new, renamed, old, strict=True)
    ]


# A wing renamed, and a new wing given its former name and mined from the same files: the ids
# the names derive are the renamed wing's drawers'. Each chunk then takes the next id of its
# sequence (the same names and facts, and the generation) that no other room holds, the same at
# every run, so mining the new wing again is a replay; a name given over again and again stops
# at the last generation with `drawer_id_taken`, as every run did before.
ID_GENERATIONS = 8


def _unclaimed(key: bytes, target: _Target, facts: list[tuple[str, str, str]]) -> list[uuid.UUID]:
    """Each chunk's id under the names mined into: the first of its sequence no other room
    holds (a deleted drawer's id is not passed over: what a curator deleted is not mined
    back)."""
    names = (target.wing, target.room_name)
    ids = [derived_id(key, MINING_NAMESPACE, *names, *f) for f in facts]
    for generation in range(1, ID_GENERATIONS):
        elsewhere = Drawer.objects.filter(uuid__in=ids)
        if target.room is not None:
            elsewhere = elsewhere.exclude(room=target.room)
        claimed = set(elsewhere.values_list("uuid", flat=True))
        if not claimed:
            break
        ids = [
            derived_id(key, MINING_NAMESPACE, *names, *f, f"#{generation}") if i in claimed else i
            for i, f in zip(ids, facts, strict=True)
        ]
    return ids


def _deleted(drawer_ids: list[uuid.UUID]) -> set[uuid.UUID]:
    """The chunks' ids whose drawers were deleted (the audit names each): a curator deleted
    what mining stored, and mining the file again does not write it back (the write would be
    refused, `drawer_id_taken`, and stopped the run)."""
    rows = AuditEntry.objects.filter(
        target_type=AuditTarget.DRAWER,
        action=AuditAction.DRAWER_DELETE,
        target_id__in=[str(drawer_id) for drawer_id in drawer_ids],
    ).values_list("target_id", flat=True)
    return {uuid.UUID(target_id) for target_id in rows}


def _held_in(room: Room, drawer_ids: list[uuid.UUID]) -> set[uuid.UUID]:
    if not drawer_ids:
        return set()
    return set(Drawer.objects.filter(room=room, uuid__in=drawer_ids).values_list("uuid", flat=True))


def _mine_document(
    target: _Target, relative: str, text: str, mtime: float, result: MiningResult
) -> None:
    pieces = list(chunks(text))
    ids = _chunk_ids(target, relative, pieces)
    kept = set(ids)
    deleted = _deleted(ids)
    for index, (chunk, drawer_id) in enumerate(zip(pieces, ids, strict=True)):
        if drawer_id in deleted:  # its id names that drawer for good (`id_replayed`)
            result.deleted += 1
            continue
        written = target.write(
            content=chunk,
            mode=services.WriteMode.MINED,
            source={"kind": MINED_SOURCE_KIND, "path": relative, "chunk": index, "mtime": mtime},
            drawer_id=drawer_id,
        )
        if written.created:
            result.created += 1
            result.similar += bool(written.links)
        else:
            result.unchanged += 1
    if target.room is None:  # the document holds no chunk, and the room is not made yet
        return
    stale = (
        Drawer.objects.current()
        .filter(room=target.room, source__kind=MINED_SOURCE_KIND, source__path=relative)
        .exclude(uuid__in=kept)
    )
    for drawer in stale:
        services.drawer_supersede(drawer=drawer)
        result.superseded += 1
