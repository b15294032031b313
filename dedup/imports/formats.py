"""The formats an import reads, each turned into the same `Record`s.

- `mempalace`: MemPalace's JSONL export, a directory tree of `*.jsonl` files (or one file), one
  drawer per line: `{"id", "document", "metadata": {"wing", "room", "source_file", "filed_at",
  "added_by", ...}}`.
- `mem0`: mem0's exported memories, JSON `{"results": [{"id", "memory", "user_id", "agent_id",
  "metadata", "categories", "created_at", "updated_at", ...}]}` (what `get_all` answers); the
  wing is the user (or the agent), the room the metadata's `category` (as the open-source
  library is often given it), else the first of the platform's `categories`, else `general`.
  A record's "line" is its 1-based position in `results`.
- `castellan`: Castellan's own JSONL (see `dedup.imports.export`); drawer lines are imported,
  other lines (links, entities, mentions, decisions) are handled by the import itself.
- `jsonl`: any JSONL, one record per line, fields picked by a mapping (`content=text`,
  `wing=meta.project`, dotted paths into the object).

A record that cannot be read is a `Malformed` with its file and line, never an exception; a file
the system refuses to read (a device, a failing disk) is `Unreadable`, naming it, which ends the
import: `files.check_readable` finds one before the import starts, where it can.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from dedup.imports.files import FILE_PATTERNS, reading, source_files
from dedup.imports.lines import WING_WANTED, Fields, Malformed, decoded
from dedup.validation import UNSCOPABLE_WING, lookup_form, unscopable

DEFAULT_ROOM = "general"
# What a mem0 record's provenance keeps besides its id and metadata.
MEM0_KEPT = ("user_id", "agent_id", "run_id", "categories", "created_at", "updated_at")
# The generic JSONL's mapping when the command line names no field: the same names as Castellan's.
DEFAULT_MAPPING = {
    "id": "id",
    "content": "content",
    "wing": "wing",
    "room": "room",
    "name": "name",
    "kind": "kind",
    "agent": "agent",
}


@dataclass(frozen=True)
class Record:
    """One memory read from a source, ready for the write path. `data` holds a Castellan line's
    extra fields (mentions, validity) for the import to apply after the write."""

    file: str
    line: int
    source_id: str
    content: str
    wing: str
    room: str
    name: str | None = None
    kind: str = ""
    agent: str = ""
    source: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Other:
    """A Castellan line that is not a drawer (a link, an entity, a mention, a decision)."""

    file: str
    line: int
    data: dict[str, Any]


Item = Record | Malformed | Other


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _json_lines(path: Path, root: Path) -> Iterator[tuple[str, int, dict[str, Any] | Malformed]]:
    name = str(path.relative_to(root)) if path != root else path.name
    with reading(path), path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            obj, problem = decoded(raw)
            if problem is not None:
                yield name, number, Malformed(name, number, problem)
                continue
            if not isinstance(obj, dict):
                yield name, number, Malformed(name, number, "not a JSON object")
                continue
            yield name, number, obj


def read_mempalace(path: Path, wing: str | None = None) -> Iterator[Item]:
    root = path if path.is_dir() else path.parent
    for file in source_files(path):
        for name, line, obj in _json_lines(file, root):
            yield obj if isinstance(obj, Malformed) else _mempalace_record(obj, name, line, wing)


def _mempalace_record(obj: dict[str, Any], name: str, line: int, wing: str | None) -> Item:
    """MemPalace's importer discards a `metadata` that is no object whole, as this does."""
    metadata = _object(obj.get("metadata"))
    fields = Fields({**obj, "metadata": metadata}, name, line)
    source_id, content = fields.source_id("id"), fields.text("document", required=True)
    wing_name = wing or fields.wing("wing", within="metadata")
    room = fields.text("room", within="metadata")
    agent = fields.text("added_by", within="metadata")
    if fields.problem is not None:
        return fields.problem
    return Record(
        file=name,
        line=line,
        source_id=source_id,
        content=content,
        wing=wing_name,
        room=room or DEFAULT_ROOM,
        agent=agent,
        source={"format": "mempalace", "id": source_id, "metadata": metadata},
    )


def read_mem0(path: Path, wing: str | None = None) -> Iterator[Item]:
    for file in source_files(path, FILE_PATTERNS["mem0"]):
        name = file.name
        with reading(file):
            raw = file.read_bytes()
        document, problem = decoded(raw)
        if problem is not None:
            yield Malformed(name, 1, problem)
            continue
        results = document.get("results") if isinstance(document, dict) else document
        if not isinstance(results, list):
            yield Malformed(name, 1, "no results list")
            continue
        for position, obj in enumerate(results, start=1):
            yield _mem0_record(obj, name, position, wing)


def _mem0_record(obj: Any, name: str, position: int, wing: str | None) -> Item:
    """mem0's own fields are strings; its `metadata` is the user's, free-form: a `category` that
    is no string names no room (the memory files under its `categories`, or `general`)."""
    if not isinstance(obj, dict):
        return Malformed(name, position, "not a JSON object")
    fields = Fields(obj, name, position)
    source_id, content = fields.source_id("id"), fields.text("memory", required=True)
    user, agent = fields.text("user_id"), fields.text("agent_id")
    if fields.problem is not None:
        return fields.problem
    owner = wing or user or agent
    if not owner:
        return Malformed(name, position, f"neither user_id nor agent_id: {WING_WANTED}")
    if unscopable(lookup_form(owner)):  # its wing: `Fields.wing`
        return Malformed(name, position, UNSCOPABLE_WING)
    metadata = _object(obj.get("metadata"))
    category = metadata.get("category")
    return Record(
        file=name,
        line=position,
        source_id=source_id,
        content=content,
        wing=owner,
        room=(category if isinstance(category, str) else "")
        or _first(obj.get("categories"))
        or DEFAULT_ROOM,
        agent=agent,
        source={
            "format": "mem0",
            "id": source_id,
            **{k: obj[k] for k in MEM0_KEPT if obj.get(k)},
            **({"metadata": metadata} if metadata else {}),
        },
    )


def _first(values: Any) -> str:
    """The first of a list of labels (mem0's platform tags each memory with `categories`)."""
    first = values[0] if isinstance(values, list) and values else None
    return first if isinstance(first, str) else ""


def read_jsonl(
    path: Path, wing: str | None = None, mapping: Mapping[str, str] | None = None
) -> Iterator[Item]:
    fields = {**DEFAULT_MAPPING, **(mapping or {})}
    root = path if path.is_dir() else path.parent
    for file in source_files(path):
        for name, line, obj in _json_lines(file, root):
            if isinstance(obj, Malformed):
                yield obj
                continue
            yield _mapped_record(obj, name, line, fields, wing)


def _mapped_record(
    obj: dict[str, Any], name: str, line: int, mapping: Mapping[str, str], wing: str | None
) -> Item:
    fields = Fields(obj, name, line)
    source_id = fields.source_id(mapping["id"])
    content = fields.text(mapping["content"], required=True)
    wing_name = wing or fields.wing(mapping["wing"])
    room, drawer_name, kind, agent = (
        fields.text(mapping[key]) for key in ("room", "name", "kind", "agent")
    )
    if fields.problem is not None:
        return fields.problem
    return Record(
        file=name,
        line=line,
        source_id=source_id,
        content=content,
        wing=wing_name,
        room=room or DEFAULT_ROOM,
        name=drawer_name or None,
        kind=kind,
        agent=agent,
        source={"format": "jsonl", "id": source_id},
    )


# The lines a Castellan export writes (dedup/imports/export.py). Links and decisions are read and
# left: the write path finds the links again, and decisions stay with the store that made them.
CASTELLAN_TYPES = ("drawer", "link", "entity", "mention", "decision")
VALIDITY_TIMES = ("valid_from", "valid_to")


def read_castellan(path: Path, wing: str | None = None) -> Iterator[Item]:
    root = path if path.is_dir() else path.parent
    for file in source_files(path):
        for name, line, obj in _json_lines(file, root):
            if isinstance(obj, Malformed):
                yield obj
            elif obj.get("type") not in CASTELLAN_TYPES:
                yield Malformed(name, line, f"type must be one of {', '.join(CASTELLAN_TYPES)}")
            elif obj.get("type") != "drawer":
                yield Other(name, line, obj)
            else:
                yield _castellan_drawer(obj, name, line, wing)


def _castellan_drawer(obj: dict[str, Any], name: str, line: int, wing: str | None) -> Item:
    fields = Fields(obj, name, line)
    source_id = fields.source_id("id")
    content, room = (fields.text(key, required=True) for key in ("content", "room"))
    wing_name = wing or fields.wing("wing")
    drawer_name, kind, agent = (fields.text(key) for key in ("name", "kind", "agent"))
    source = obj.get("source")
    if source is not None and not isinstance(source, dict):
        fields.problem = fields.problem or Malformed(name, line, "source must be a JSON object")
    broken = fields.problem or next(iter(_validity_problems(obj, name, line)), None)
    if broken is not None:
        return broken
    return Record(
        file=name,
        line=line,
        source_id=source_id,
        content=content,
        wing=wing_name,
        room=room,
        name=drawer_name or None,
        kind=kind,
        agent=agent,
        source=source or {},
        data={k: obj.get(k) for k in ("valid_from", "valid_to", "superseded_by")},
    )


def _validity_problems(obj: Mapping[str, Any], name: str, line: int) -> list[Malformed]:
    """A drawer's validity as the export writes it: ISO 8601 times (or null), and the id of the
    drawer that superseded it as text. Anything else would be stored as a validity no one set."""
    problems = []
    for key in VALIDITY_TIMES:
        value = obj.get(key)
        if value is not None and parse_when(value) is None:
            problems.append(Malformed(name, line, f"{key} is not an ISO 8601 date and time"))
    by = obj.get("superseded_by")
    if by is not None and not (isinstance(by, str) and by.strip()):
        problems.append(Malformed(name, line, "superseded_by is not a drawer id"))
    return problems


def parse_when(value: Any) -> datetime | None:
    """A time as a file writes it (ISO 8601), one without an offset read as UTC, as Castellan's
    own export writes every time; None for anything else (the reader refuses a drawer of one)."""
    try:
        when = parse_datetime(value) if isinstance(value, str) else None
    except ValueError:  # well formed, but no such date ("9999-99-99T00:00:00")
        return None
    if when is not None and timezone.is_naive(when):
        when = when.replace(tzinfo=UTC)
    return when
