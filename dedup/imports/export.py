"""Exports, as a stream of JSON lines read from the database a chunk at a time (never the whole
store in memory).

Castellan's JSONL, in this order, one object a line, each with a `type`:
- `drawer`: `id`, `wing`, `room`, `content` (verbatim), `name`, `kind`, `agent`, `source`
  (provenance), `valid_from`, `valid_to`, `superseded_by`; oldest first;
- `link`: `newer`, `older` (drawer ids), `verdict`, `similarity`, `signals` (the evidence),
  `status`;
- `entity`: `id`, `name`, `kind`, `aliases` (`[{alias, source}]`);
- `mention`: `drawer`, `entity`, `name` (as seen), `kind`, `observation`, `provenance`;
- `decision`: a curator's decision from the audit log (`action`, `target`, `actor`, `at`, `data`).

Importing it writes the drawers through the write path, oldest first, under ids regenerated
from the exported ones (keyed, with the wing: `dedup.imports.ids.client_id`); the
write path finds the same links again (so `link` lines are not read), entities get new ids, and
decisions are not imported (deciding stays with the curators of the store importing). Apart from
those regenerated ids, an export of the imported store is the export imported.

MemPalace's JSONL: `{"id", "document", "metadata": {"wing", "room", "source_file", "filed_at",
"added_by", ...}}` per current drawer, as MemPalace's importer (`mempalace/importer.py`) reads it:
`id` a non-empty string, `document` a string, `metadata` an object of scalar values (any other
value it drops). MemPalace reads a directory tree of `*.jsonl`; `export_memories` writes one
like MemPalace's own export (`<wing>/<room>.jsonl` and `export-manifest.json`) when OUT is a
directory.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator
from typing import Any

from django.db.models import Q, QuerySet

from palace.models import DECISION_PREFIX, AuditEntry, Drawer, DrawerLink, Entity, Mention

CHUNK = 500
FORMATS = ("castellan", "mempalace")


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True) + "\n"


def _when(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _drawers(wing: str | None) -> QuerySet[Drawer]:
    drawers = Drawer.objects.all()
    return drawers.filter(room__wing__name=wing) if wing else drawers


def export_lines(
    *, wing: str | None = None, format: str = "castellan"
) -> Generator[str, None, None]:
    """The export, a line at a time. A caller that stops reading closes it (`close()`), so the
    database cursor it reads from is closed while the connection is still open."""
    if format == "mempalace":
        yield from _mempalace_lines(wing)
        return
    yield from _drawer_lines(wing)
    yield from _link_lines(wing)
    yield from _entity_lines(wing)
    yield from _mention_lines(wing)
    if not wing:  # decisions span wings: a whole-store export holds them
        yield from _decision_lines()


def _drawer_lines(wing: str | None) -> Iterator[str]:
    rows = (
        _drawers(wing)
        .order_by("id")
        .values_list(
            "uuid",
            "room__wing__name",
            "room__name",
            "content",
            "name",
            "kind",
            "agent",
            "source",
            "valid_from",
            "valid_to",
            "superseded_by__uuid",
        )
    )
    for row in rows.iterator(chunk_size=CHUNK):
        drawer_id, wing_name, room, content, name, kind, agent, source, since, until, by = row
        yield _line(
            {
                "type": "drawer",
                "id": str(drawer_id),
                "wing": wing_name,
                "room": room,
                "content": content,
                "name": name,
                "kind": kind,
                "agent": agent,
                "source": source,
                "valid_from": _when(since),
                "valid_to": _when(until),
                "superseded_by": str(by) if by else None,
            }
        )


def _link_lines(wing: str | None) -> Iterator[str]:
    links = DrawerLink.objects.order_by("id")
    if wing:
        links = links.filter(newer__room__wing__name=wing, older__room__wing__name=wing)
    rows = links.values_list(
        "newer__uuid", "older__uuid", "verdict", "similarity", "signals", "status"
    )
    for newer, older, verdict, similarity, signals, status in rows.iterator(chunk_size=CHUNK):
        yield _line(
            {
                "type": "link",
                "newer": str(newer),
                "older": str(older),
                "verdict": verdict,
                "similarity": similarity,
                "signals": signals,
                "status": status,
            }
        )


def _entity_lines(wing: str | None) -> Iterator[str]:
    entities = Entity.objects.order_by("id").prefetch_related("alias_set")
    if wing:
        entities = entities.filter(mentions__drawer__room__wing__name=wing).distinct()
    for entity in entities.iterator(chunk_size=CHUNK):
        aliases = sorted(entity.alias_set.all(), key=lambda alias: alias.id)
        yield _line(
            {
                "type": "entity",
                "id": str(entity.uuid),
                "name": entity.name,
                "kind": entity.kind,
                "aliases": [{"alias": a.alias, "source": a.source} for a in aliases],
            }
        )


def _mention_lines(wing: str | None) -> Iterator[str]:
    mentions = Mention.objects.order_by("id").select_related("drawer", "entity")
    if wing:
        mentions = mentions.filter(drawer__room__wing__name=wing)
    for mention in mentions.iterator(chunk_size=CHUNK):
        yield _line(
            {
                "type": "mention",
                "drawer": str(mention.drawer.uuid),
                "entity": str(mention.entity.uuid),
                "name": mention.observation.get("name", mention.entity.name),
                "kind": mention.entity.kind,
                "observation": mention.observation,
                "provenance": mention.provenance,
            }
        )


def _decision_lines() -> Iterator[str]:
    decisions = AuditEntry.objects.filter(action__startswith=DECISION_PREFIX).order_by("id")
    for entry in decisions.iterator(chunk_size=CHUNK):
        yield _line(
            {
                "type": "decision",
                "action": entry.action,
                "target": f"{entry.target_type}:{entry.target_id}",
                "actor": entry.actor_label,
                "at": _when(entry.created_at),
                "data": entry.data,
            }
        )


def _mempalace_lines(wing: str | None) -> Iterator[str]:
    drawers = _drawers(wing).filter(Q(valid_to__isnull=True)).order_by("id")
    rows = drawers.values_list(
        "uuid", "content", "room__wing__name", "room__name", "agent", "source", "valid_from"
    )
    for drawer_id, content, wing_name, room, agent, source, since in rows.iterator(
        chunk_size=CHUNK
    ):
        source = source if isinstance(source, dict) else {}
        yield _line(
            {
                "id": str(drawer_id),
                "document": content,
                "metadata": {
                    **_scalars(source.get("metadata")),
                    "wing": wing_name,
                    "room": room,
                    "source_file": str(source.get("file") or ""),
                    "filed_at": _when(since) or "",
                    "added_by": agent,
                },
            }
        )


def _scalars(metadata: Any) -> dict[str, str | int | float | bool]:
    """Metadata as MemPalace keeps it (its vector store takes scalar values only, and its
    importer drops any other): a list or an object becomes its JSON text, nothing is dropped
    but empty values."""
    if not isinstance(metadata, dict):
        return {}
    return {
        str(key): value if isinstance(value, str | int | float | bool) else json.dumps(value)
        for key, value in metadata.items()
        if value is not None
    }


def mempalace_path(wing: str, room: str) -> str:
    """Where MemPalace's own export files a room: `<wing>/<room>.jsonl`, each name made safe as
    a path component."""
    return f"{_component(wing)}/{_component(room)}.jsonl"


def _component(name: str) -> str:
    return re.sub(r'[\x00-\x1f/\\:*?"<>|]', "_", name).strip(". ") or "unknown"
