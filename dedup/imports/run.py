"""Running an import: every record through the write path (`drawer_write`, mode memory), in file
order, a chunk of records per transaction (`dedup.imports.chunks`), recorded on the `Import` as it
goes.

A record's drawer id is derived from its format, its wing and its source id, keyed with the
installation's key (`dedup.imports.ids.client_id`), so importing the same file into the same wing
again replays every record and stores nothing, and no key can compute an import's ids before it
runs (to take one first) nor ask whether another wing imported a record. A record the write
path refuses (empty content, a name taken) is counted as malformed with its file and line, like
one that cannot be read; nothing is fatal. The summary counts `records` read, drawers `created`
(of which `similar` were linked to drawers they resemble), records stored as nothing new
(`exact`: an exact copy, or a record imported before), and `malformed` ones. A dry run checks
the records a chunk at a time too (`dedup.imports.dry_run`), against the store as it is, so it
does not see the file's own earlier records.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from dedup.errors import DomainError
from dedup.imports import formats
from dedup.imports.chunks import ChunkWriter, ImportStopped, Tally, hold_running
from dedup.imports.dry_run import ChunkChecker
from dedup.imports.ids import (
    IMPORT_NAMESPACE,
    FileDrawers,
    client_id,
    legacy_client_id,
)
from dedup.imports.supersessions import apply_supersessions
from dedup.services import entity_resolve, mention_add
from dedup.services.config import Actor
from dedup.services.entity_aliases import entity_alias_add
from dedup.services.rooms import wing_to_import_into
from dedup.validation import place_name
from palace.models import (
    DECIDE_PERMISSION,
    PERSON_ALIAS_SOURCES,
    AuditAction,
    AuditEntry,
    AuditTarget,
    Drawer,
    EntityAlias,
    Import,
    acting_user,
)

logger = logging.getLogger("castellan.imports")

Reader = Callable[..., Iterator[formats.Item]]
__all__ = [
    "IMPORT_NAMESPACE",
    "READERS",
    "Tally",
    "client_id",
    "import_create",
    "import_run",
    "legacy_client_id",
]

READERS: dict[str, Reader] = {
    Import.Format.MEMPALACE: formats.read_mempalace,
    Import.Format.MEM0: formats.read_mem0,
    Import.Format.CASTELLAN: formats.read_castellan,
    Import.Format.JSONL: formats.read_jsonl,
}


def import_create(
    *,
    source: str,
    format: str,
    wing: str | None = None,
    mapping: Mapping[str, str] | None = None,
    actor: Actor = None,
    upload: str = "",
    wings: Iterable[str] = (),
    agent: str = "",
    agent_only: bool = False,
    aliases: bool = True,
) -> Import:
    """The record of an import about to run (queued); `upload` holds a file sent over the API,
    `wings` the wings its records name (`record_wings`: an agent key sees the import when it
    reaches every one; a line naming a drawer by the file's id finds it in them only).
    `agent` writes the records that name no agent, and, with `agent_only`, every record (the
    agent a record names is then kept in its drawer's source): an agent's key imports as itself,
    as it writes. Without `aliases` (a key short of every wing: an alias steers the entity's
    sightings in every wing, so only a key of every wing records one) an entity's aliases are
    not recorded, each such line listed with the reason."""
    options = {"wing": wing or "", "mapping": dict(mapping or {}), "wings": sorted(wings)}
    return Import.objects.create(
        summary=Tally().summary(),  # nothing read yet; each chunk saves what it committed
        upload=upload,
        created_by=acting_user(actor),
        source=source,
        format=Import.Format(format),
        options={**options, "agent": agent, "agent_only": agent_only, "aliases": aliases},
    )


def import_run(
    imported: Import,
    *,
    path: Path,
    dry_run: bool = False,
    on_progress: Callable[[int], None] | None = None,
) -> Tally:
    """Read `path` in the import's format and write every record. A dry run asks the write path
    what it would do (`drawer_check`) and writes nothing, not even the import's progress.
    `on_progress` is told the records read so far (`Tally.read`) after each chunk and at the end.

    Only a queued import runs (a task delivered twice runs it once), and it stops where it is,
    having written nothing more, once it is reversed (`chunks.hold_running`); a failure, or the
    process interrupted (KeyboardInterrupt, SystemExit), marks it failed (it can be reversed
    then too, removing what it stored, or imported again to go on)."""
    tally = Tally()
    if dry_run:
        _run_items(imported, path, tally, dry_run, on_progress)
        return tally
    if not Import.objects.filter(pk=imported.pk, status=Import.Status.QUEUED).update(
        status=Import.Status.RUNNING
    ):
        logger.warning("import %s is not queued: not run", imported.pk)
        return tally
    imported.status = Import.Status.RUNNING
    try:
        _run_items(imported, path, tally, dry_run, on_progress)
        _finish(imported, tally)
    except ImportStopped as stopped:
        tally.stopped = True
        logger.warning("%s: stopped, writing nothing more", stopped)
    except BaseException:  # a fault, or the process told to stop (Ctrl-C, SIGTERM): not running
        try:
            _fail(imported, tally)
        except Exception:  # the connection went with the interruption: the first error tells
            logger.exception("import %s: could not be marked failed", imported.pk)
        raise
    return tally


def _run_items(
    imported: Import,
    path: Path,
    tally: Tally,
    dry_run: bool,
    on_progress: Callable[[int], None] | None,
) -> None:
    options = imported.options or {}
    arguments: dict[str, Any] = {"wing": options.get("wing") or None}
    if imported.format == Import.Format.JSONL:
        arguments["mapping"] = options.get("mapping") or {}
    writer = ChunkChecker(imported, tally) if dry_run else ChunkWriter(imported, tally)
    for item in READERS[imported.format](path, **arguments):
        tally.files.add(item.file)
        tally.read += 1
        if isinstance(item, formats.Record):
            tally.records += 1
            reached = writer.add(item)
        else:
            writer.flush()  # what came before is written first (and errors stay in file order)
            reached = False
            if isinstance(item, formats.Malformed):
                tally.malformed(item)
            elif isinstance(writer, ChunkWriter):
                _apply_other(imported, item, tally, writer.file_drawers)
        if reached and on_progress is not None:
            on_progress(tally.read)
    writer.flush()
    if isinstance(writer, ChunkWriter):
        apply_supersessions(imported, writer.supersessions, writer.file_drawers, tally)
    if on_progress is not None:
        on_progress(tally.read)


@transaction.atomic
def _apply_other(
    imported: Import, item: formats.Other, tally: Tally, file_drawers: FileDrawers
) -> None:
    """A Castellan entity (with its aliases) or mention. Links are not read: the write path
    finds them again as the drawers are written in their order; decisions stay with the store
    that made them. A mention names its drawer by the file's id: the drawer the import wrote
    under it, or the one that already held the record (a file exported from this store, imported
    back, is exact copies of its drawers): `FileDrawers`."""
    hold_running(imported)
    data = item.data
    aliases = imported.options.get("aliases", True)  # a key of every wing's (or a command's)
    try:
        if data.get("type") == "entity":
            name, kind = _text(data, "name"), _text(data, "kind")
            recorded = _person_aliases(imported, data.get("aliases") or [])  # malformed: nothing
            entity = entity_resolve(name=name, kind=kind, record_alias=aliases).entity
            if recorded and not aliases:
                raise ValueError(ALIASES_NEED_EVERY_WING)
            for alias, source in recorded:
                entity_alias_add(
                    entity=entity, alias=alias, source=source, actor=imported.created_by
                )
        elif data.get("type") == "mention":
            drawer = _mentioned_drawer(imported, _text(data, "drawer"), file_drawers)
            written = mention_add(
                drawer=drawer,
                name=_text(data, "name"),
                kind=_text(data, "kind"),
                provenance=data.get("provenance"),
                record_alias=aliases,
            )
            if written.created:  # one made before is not the import's
                Import.mentions.through.objects.create(
                    import_id=imported.pk, mention_id=written.mention.pk
                )
    except (DomainError, KeyError, TypeError, ValueError) as error:
        tally.malformed(formats.Malformed(item.file, item.line, _reason(error)))


ALIASES_NEED_EVERY_WING = (
    "The entity is recorded, its aliases are not: an alias steers the entity's sightings in "
    "every wing, and this import's key reaches only some."
)


def _text(data: dict[str, Any], key: str) -> str:
    """A line's text field, a string as in a REST body (`str()` stored a number, or a list as
    Python writes one); KeyError if it is missing."""
    value = data[key]
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


def _reason(error: Exception) -> str:
    """Why a line was refused, in words: a missing field is named."""
    if isinstance(error, KeyError):
        return f"missing {error.args[0]!r}"
    return str(error)


def _mentioned_drawer(imported: Import, file_id: str, file_drawers: FileDrawers) -> Drawer:
    drawer = file_drawers.named(file_id).first()
    if drawer is None:
        where = "the wings this import writes to" if imported.options.get("wings") else "the store"
        raise ValueError(f"The mention's drawer {file_id!r} is neither in the file nor in {where}.")
    return drawer


def _person_aliases(imported: Import, aliases: Any) -> list[tuple[str, EntityAlias.Source]]:
    """The aliases of an entity line a person recorded, each with the source it is recorded
    under; a convergence's come back with the mentions."""
    if not (isinstance(aliases, list) and all(isinstance(alias, dict) for alias in aliases)):
        raise ValueError("aliases must be a list of objects {alias, source}")
    sourced = [
        (_text(alias, "alias"), _alias_source(imported, EntityAlias.Source(alias["source"])))
        for alias in aliases
    ]
    return [(alias, source) for alias, source in sourced if source in PERSON_ALIAS_SOURCES]


def _alias_source(imported: Import, source: EntityAlias.Source) -> EntityAlias.Source:
    """A curator's alias is imported as one only for a curator (or a command, which names no
    one); anyone else's import records it as a person's alias through the API, which it is."""
    creator = imported.created_by
    if source == EntityAlias.Source.CURATOR and creator and not creator.has_perm(DECIDE_PERMISSION):
        return EntityAlias.Source.API
    return source


def _fail(imported: Import, tally: Tally) -> None:
    """Mark a running import failed, keeping the summary its last committed chunk saved, and the
    malformed records that summary counts."""
    committed = Import.objects.filter(pk=imported.pk).values_list("summary", flat=True).first()
    malformed = (committed or {}).get("malformed", 0)
    Import.objects.filter(pk=imported.pk, status=Import.Status.RUNNING).update(
        status=Import.Status.FAILED, errors=tally.errors[:malformed]
    )


def _set(imported: Import, **fields: Any) -> None:
    for name, value in fields.items():
        setattr(imported, name, value)
    imported.save(update_fields=list(fields))


def _finish(imported: Import, tally: Tally) -> None:
    with transaction.atomic():
        hold_running(imported)
        _set(
            imported,
            status=Import.Status.DONE,
            progress=tally.records,
            summary=tally.summary(),
            errors=tally.errors,
            finished_at=timezone.now(),
        )
        AuditEntry.objects.record(
            actor=imported.created_by,
            action=AuditAction.IMPORT_APPLY,
            target_type=AuditTarget.IMPORT,
            target_id=imported.pk,
            after={"summary": tally.summary()},
            data={"source": imported.source, "format": imported.format},
        )


def record_wings(
    path: Path, *, format: str, wing: str | None, mapping: Mapping[str, str]
) -> set[str]:
    """The wings a file's records would be written into, read without writing, as the write path
    takes them (trimmed; a record whose wing it refuses names none): what an API key must be
    allowed to write to before the import is queued, and what every import records
    (`import_create`), so that a key sees an import when it reaches every wing it writes to. A
    wing given for the whole file is checked as a write's (`wing_to_import_into`): a stored
    one, or a new wing's name, else DomainError, before anything is recorded."""
    if wing:  # "" (or None) is no wing for the whole file, as the readers take it
        return {wing_to_import_into(wing)}
    arguments: dict[str, Any] = {"mapping": mapping} if format == Import.Format.JSONL else {}
    named = {
        item.wing for item in READERS[format](path, **arguments) if isinstance(item, formats.Record)
    }
    return {label for label in map(_wing_label, named) if label}


def _wing_label(wing: str) -> str:
    try:
        return place_name(wing, "wing")
    except DomainError:
        return ""  # the write path refuses the record
