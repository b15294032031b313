"""The files an import reads: which they are (a file, or a directory's files of the format), a
check that the system lets each be read before the import starts, and how many records they
hold, for its progress. A file the system refuses to read (a device, a failing disk) is
`Unreadable`, naming it, which ends the import."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# The files each format reads in a directory.
FILE_PATTERNS = {
    "mempalace": "*.jsonl",
    "mem0": "*.json",
    "castellan": "*.jsonl",
    "jsonl": "*.jsonl",
}


class Unreadable(Exception):
    """A source file the system refuses to read: the import cannot read on, and says which file
    and why."""

    def __init__(self, file: Path, error: OSError) -> None:
        super().__init__(f"cannot read {file}: {error.strerror or error}")
        self.file = file


@contextmanager
def reading(file: Path) -> Iterator[None]:
    try:
        yield
    except OSError as error:
        raise Unreadable(file, error) from error


def check_readable(path: Path, format: str) -> None:
    """Read a byte of every file an import of `path` in `format` reads, so that one the system
    refuses (`Unreadable`) is refused before the import starts, not part-way through it."""
    for file in source_files(path, FILE_PATTERNS[format]):
        with reading(file), file.open("rb") as stream:
            stream.read(1)


def records_in(path: Path, format: str) -> int | None:
    """How many records an import of `path` in `format` reads, for its progress: the lines
    holding anything of its JSON-lines files (a record each, malformed or not; one pass, no
    parsing). None for mem0's JSON documents, whose records are known only once parsed, and
    for a file that cannot be read: the import meets it, and says so."""
    if format == "mem0":
        return None
    count = 0
    try:
        for file in source_files(path, FILE_PATTERNS[format]):
            with file.open("rb") as lines:
                count += sum(1 for raw in lines if raw.strip())
    except OSError:
        return None
    return count


def source_files(path: Path, pattern: str = "*.jsonl") -> list[Path]:
    """The files an import reads: the file itself, or a directory's matching files, sorted."""
    if path.is_dir():
        return sorted(p for p in path.rglob(pattern) if p.is_file())
    return [path]
