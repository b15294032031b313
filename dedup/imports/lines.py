"""What an import reads from a file's line, whatever its format: the JSON document a line holds,
read as the REST API reads a body (`decoded`), and its fields as a body's are (`Fields`); a line
that cannot be read so is `Malformed`, with its file, its line and why."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dedup import json_text
from dedup.validation import (
    MAX_DEPTH,
    UNSCOPABLE_WING,
    UNSTORABLE_MESSAGE,
    document_problem,
    lookup_form,
    unscopable,
)


@dataclass(frozen=True)
class Malformed:
    file: str
    line: int
    error: str

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "error": self.error}


def dotted(obj: Any, path: str) -> Any:
    """`obj["a"]["b"]` for `a.b`; None where the path leads nowhere."""
    for part in path.split("."):
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(part)
    return obj


# Said of a record without a wing: a store that kept none (a MemPalace export without
# `metadata.wing`) is imported by naming one for every record.
WING_WANTED = (
    "give each record one, or file them all in one wing "
    "(import_memories --wing; an API import's wing)"
)

# A file's line may start with one where a text editor saved it so (a body over a network may not).
LINE_BYTE_ORDER_MARK = (
    "a byte order mark (U+FEFF) before the JSON: save the file as UTF-8 without one."
)


def decoded(raw: bytes) -> tuple[Any, str | None]:
    """A JSON text's document, or why it cannot be one a record is read from, in the words the
    REST API refuses a body in (`json_text.json_problem`; Python's own named its codec, told to
    decode with utf-8-sig or raise `sys.set_int_max_str_digits`): not UTF-8 or not JSON, nested
    past the decoder's or `MAX_DEPTH`'s depth, or holding a NUL or a lone surrogate (PostgreSQL
    stores neither). NaN, Infinity and numbers beyond a float's range are no JSON, as in a body
    (`json_text.loads`): the line holding one was stored, its value left out or, in a `source`,
    refused by PostgreSQL, which failed the import."""
    try:
        document = json_text.loads(raw)
    except RecursionError:
        return None, f"nested deeper than {MAX_DEPTH} levels"
    except ValueError as error:  # UnicodeDecodeError, JSONDecodeError too
        why = json_text.json_problem(error, LINE_BYTE_ORDER_MARK)
        return None, f"not JSON: {why[:200]}"
    problem = document_problem(document)
    if problem is None:
        return document, None
    path, what = problem
    if what == "deep":
        return None, f"nested deeper than {MAX_DEPTH} levels"
    return None, f"{path or 'the record'}: {UNSTORABLE_MESSAGE}"


class Fields:
    """A line's fields, read as a REST body's are: texts are JSON strings (`"content": 5` was
    stored as "5", a name `{"a": 1}` as Python's text of a dict); a source's id is a string or
    an integer (JSONL files number their records). The first field at fault is kept, as the
    line's `Malformed`, and the rest read as absent."""

    def __init__(self, obj: Mapping[str, Any], file: str, line: int) -> None:
        self.obj, self.file, self.line = obj, file, line
        self.problem: Malformed | None = None

    def _refuse(self, error: str) -> str:
        self.problem = self.problem or Malformed(self.file, self.line, error)
        return ""

    def source_id(self, path: str) -> str:
        value = dotted(self.obj, path)
        if value is None or (isinstance(value, str) and not value.strip()):
            return self._refuse(f"missing {path}")
        if isinstance(value, bool) or not isinstance(value, str | int):
            return self._refuse(f"{path} must be a string or an integer")
        return str(value)

    def text(self, path: str, *, required: bool = False, within: str = "") -> str:
        """The string at `path` (in the object at `within`, named so), "" if absent (None)."""
        value = dotted(self.obj, f"{within}.{path}" if within else path)
        if required and (value is None or (isinstance(value, str) and not value.strip())):
            return self._refuse(f"missing {path}")
        if value is not None and not isinstance(value, str):
            return self._refuse(f"{path} must be a string")
        return value or ""

    def wing(self, path: str, *, within: str = "") -> str:
        """A record's wing: one an agent key can name (`validation.unscopable`). A wing '*' or
        holding ',' was created by an import, where a write refuses it, and no key could be
        scoped to it (nor to the import writing it). A record without one is told which field
        it lacks, `within` included ("missing metadata.wing"), and how to give every record one
        (`WING_WANTED`)."""
        field = f"{within}.{path}" if within else path
        value = dotted(self.obj, field)
        if value is None or (isinstance(value, str) and not value.strip()):
            return self._refuse(f"missing {field}: {WING_WANTED}")
        wing = self.text(path, within=within)
        return self._refuse(UNSCOPABLE_WING) if unscopable(lookup_form(wing)) else wing
