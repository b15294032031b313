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

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from dedup.imports.files import FILE_PATTERNS, reading, source_files
from dedup.json_text import json_problem
from dedup.validation import MAX_DEPTH, UNSTORABLE_MESSAGE, document_problem

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
class Malformed:
    file: str
    line: int
    error: str

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "error": self.error}


@dataclass(frozen=True)
class Other:
    """A Castellan line that is not a drawer (a link, an entity, a mention, a decision)."""

    file: str
    line: int
    data: dict[str, Any]


Item = Record | Malformed | Other


def dotted(obj: Any, path: str) -> Any:
    """`obj["a"]["b"]` for `a.b`; None where the path leads nowhere."""
    for part in path.split("."):
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(part)
    return obj


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return "" if value is None else str(value)


# A file's line may start with one where a text editor saved it so (a body over a network may not).
LINE_BYTE_ORDER_MARK = (
    "a byte order mark (U+FEFF) before the JSON: save the file as UTF-8 without one."
)


def _decoded(raw: bytes) -> tuple[Any, str | None]:
    """A JSON text's document, or why it cannot be one a record is read from, in the words the
    REST API refuses a body in (`json_text.json_problem`; Python's own named its codec, told to
    decode with utf-8-sig or raise `sys.set_int_max_str_digits`): not UTF-8 or not JSON, nested
    past the decoder's or `MAX_DEPTH`'s depth, or holding a NUL or a lone surrogate (PostgreSQL
    stores neither)."""
    try:
        document = json.loads(raw.decode("utf-8"))
    except RecursionError:
        return None, f"nested deeper than {MAX_DEPTH} levels"
    except ValueError as error:  # UnicodeDecodeError, JSONDecodeError too
        return None, f"not JSON: {json_problem(error, LINE_BYTE_ORDER_MARK)[:200]}"
    problem = document_problem(document)
    if problem is None:
        return document, None
    path, what = problem
    if what == "deep":
        return None, f"nested deeper than {MAX_DEPTH} levels"
    return None, f"{path or 'the record'}: {UNSTORABLE_MESSAGE}"


def _json_lines(path: Path, root: Path) -> Iterator[tuple[str, int, dict[str, Any] | Malformed]]:
    name = str(path.relative_to(root)) if path != root else path.name
    with reading(path), path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            obj, problem = _decoded(raw)
            if problem is not None:
                yield name, number, Malformed(name, number, problem)
                continue
            if not isinstance(obj, dict):
                yield name, number, Malformed(name, number, "not a JSON object")
                continue
            yield name, number, obj


def _required(obj: Mapping[str, Any], path: str, name: str, line: int) -> str | Malformed:
    value = dotted(obj, path)
    if value is None or (isinstance(value, str) and not value.strip()):
        return Malformed(name, line, f"missing {path}")
    if not isinstance(value, str | int | float):
        return Malformed(name, line, f"{path} is not text")
    return str(value)


# Said of a record without a wing: a store that kept none (a MemPalace export without
# `metadata.wing`) is imported by naming one for every record.
WING_WANTED = (
    "give each record one, or file them all in one wing "
    "(import_memories --wing; an API import's wing)"
)


def _wing(
    obj: Mapping[str, Any], path: str, name: str, line: int, shown: str = ""
) -> str | Malformed:
    """The record's wing at `path`, or why it has none, naming the field (`shown`, else `path`)
    and how to give every record one."""
    value = _required(obj, path, name, line)
    if isinstance(value, Malformed) and value.error == f"missing {path}":
        return Malformed(name, line, f"missing {shown or path}: {WING_WANTED}")
    return value


def read_mempalace(path: Path, wing: str | None = None) -> Iterator[Item]:
    root = path if path.is_dir() else path.parent
    for file in source_files(path):
        for name, line, obj in _json_lines(file, root):
            if isinstance(obj, Malformed):
                yield obj
                continue
            metadata = _object(obj.get("metadata"))
            fields = [
                _required(obj, "id", name, line),
                _required(obj, "document", name, line),
                wing or _wing(metadata, "wing", name, line, shown="metadata.wing"),
            ]
            broken = next((f for f in fields if isinstance(f, Malformed)), None)
            if broken is not None:
                yield broken
                continue
            source_id, content, wing_name = (str(f) for f in fields)
            yield Record(
                file=name,
                line=line,
                source_id=source_id,
                content=content,
                wing=wing_name,
                room=_text(metadata.get("room")) or DEFAULT_ROOM,
                agent=_text(metadata.get("added_by")),
                source={"format": "mempalace", "id": source_id, "metadata": metadata},
            )


def read_mem0(path: Path, wing: str | None = None) -> Iterator[Item]:
    for file in source_files(path, FILE_PATTERNS["mem0"]):
        name = file.name
        with reading(file):
            raw = file.read_bytes()
        document, problem = _decoded(raw)
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
    if not isinstance(obj, dict):
        return Malformed(name, position, "not a JSON object")
    source_id = _required(obj, "id", name, position)
    content = _required(obj, "memory", name, position)
    owner = wing or _text(obj.get("user_id")) or _text(obj.get("agent_id"))
    if isinstance(source_id, Malformed) or isinstance(content, Malformed):
        return source_id if isinstance(source_id, Malformed) else content  # type: ignore[return-value]
    if not owner:
        return Malformed(name, position, f"neither user_id nor agent_id: {WING_WANTED}")
    metadata = _object(obj.get("metadata"))
    return Record(
        file=name,
        line=position,
        source_id=source_id,
        content=content,
        wing=owner,
        room=_text(metadata.get("category")) or _first(obj.get("categories")) or DEFAULT_ROOM,
        agent=_text(obj.get("agent_id")),
        source={
            "format": "mem0",
            "id": source_id,
            **{k: obj[k] for k in MEM0_KEPT if obj.get(k)},
            **({"metadata": metadata} if metadata else {}),
        },
    )


def _first(values: Any) -> str:
    """The first of a list of labels (mem0's platform tags each memory with `categories`)."""
    return _text(values[0]) if isinstance(values, list) and values else ""


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
    obj: dict[str, Any], name: str, line: int, fields: Mapping[str, str], wing: str | None
) -> Item:
    required = [_required(obj, fields[key], name, line) for key in ("id", "content")]
    required.append(wing or _wing(obj, fields["wing"], name, line))
    broken = next((f for f in required if isinstance(f, Malformed)), None)
    if broken is not None:
        return broken
    source_id, content, wing_name = (str(f) for f in required)
    return Record(
        file=name,
        line=line,
        source_id=source_id,
        content=content,
        wing=wing_name,
        room=_text(dotted(obj, fields["room"])) or DEFAULT_ROOM,
        name=_text(dotted(obj, fields["name"])) or None,
        kind=_text(dotted(obj, fields["kind"])),
        agent=_text(dotted(obj, fields["agent"])),
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
    required = [_required(obj, key, name, line) for key in ("id", "content", "room")]
    required.append(wing or _wing(obj, "wing", name, line))
    required.extend(_validity_problems(obj, name, line))
    broken = next((f for f in required if isinstance(f, Malformed)), None)
    if broken is not None:
        return broken
    source_id, content, room, wing_name = (str(f) for f in required)
    source = obj.get("source")
    return Record(
        file=name,
        line=line,
        source_id=source_id,
        content=content,
        wing=wing_name,
        room=room,
        name=_text(obj.get("name")) or None,
        kind=_text(obj.get("kind")),
        agent=_text(obj.get("agent")),
        source=source if isinstance(source, dict) else {},
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
