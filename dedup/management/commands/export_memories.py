import json
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from pathlib import Path
from typing import IO, Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from dedup import imports
from dedup.commands import CastellanCommand
from dedup.validation import place_name
from palace import selectors

MAX_OPEN_FILES = 100


class Command(CastellanCommand):
    help = (
        "Export drawers, links, entities, mentions and decisions as Castellan JSONL (or the "
        "current drawers as MemPalace JSONL) to OUT, written a line at a time. MemPalace JSONL "
        "into a directory (OUT existing, or ending in /) is a tree like MemPalace's own export, "
        "<wing>/<room>.jsonl and export-manifest.json, which MemPalace's importer reads. "
        "OUT - is standard output."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("out")
        parser.add_argument("--wing")
        parser.add_argument("--format", default="castellan", choices=imports.EXPORT_FORMATS)
        parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")

    def handle(self, *args: Any, out: str, wing: str | None, format: str, **options: Any) -> None:
        if wing is not None:
            wing = self.existing_wing(wing)
        # Lines written so far, on stderr (the export itself may be stdout); a store's export
        # runs for minutes. Shown on a terminal only: piped or logged, it would be noise.
        self.bar = tqdm(
            unit=" lines",
            desc="exporting",
            disable=True if options["no_progress"] else None,
            file=sys.stderr,
        )
        try:
            count = self._export(out, wing, format)
        except OSError as error:  # a directory that is not there, a full disk...
            raise CommandError(f"cannot write {out}: {error.strerror or error}") from error
        finally:
            self.bar.close()
        # Written to standard output, the export is followed by nothing but itself.
        report = self.stderr if out == "-" else self.stdout
        # Plain: on a terminal Django colours whatever goes to stderr as an error.
        report.write(f"{count} lines written to {out}", style_func=lambda text: text)

    def existing_wing(self, wing: str) -> str:
        """The wing named, refused when no wing has that name: an export of nothing would look
        like an empty wing's."""
        wing = place_name(wing, "wing")
        if not selectors.wing_exists(wing):
            raise CommandError(f"No wing {wing}.")
        return wing

    def _export(self, out: str, wing: str | None, format: str) -> int:
        # Closed here, not when collected: a failed write leaves the export's database cursor
        # open, and closing it after the command has closed the connection prints a traceback.
        with closing(imports.export_lines(wing=wing, format=format)) as exported:
            lines = counted(exported, self.bar)
            if out == "-":
                count = write_lines(lines, lambda line: self.stdout.write(line, ending=""))
                self.stdout.flush()
                return count
            if format == "mempalace" and (out.endswith("/") or Path(out).is_dir()):
                return write_tree(Path(out), lines)
            with Path(out).open("w", encoding="utf-8") as stream:
                return write_lines(lines, stream.write)


def counted(lines: Iterable[str], bar: tqdm) -> Iterator[str]:
    for line in lines:
        bar.update()
        yield line


def write_lines(lines: Iterable[str], write: Callable[[str], object]) -> int:
    count = 0
    for line in lines:
        write(line)
        count += 1
    return count


def write_tree(root: Path, lines: Any) -> int:
    """MemPalace's layout: a file per room under a directory per wing, and a manifest."""
    root.mkdir(parents=True, exist_ok=True)
    files: dict[Path, IO[str]] = {}
    rooms: set[Path] = set()
    count = 0
    try:
        for line in lines:
            metadata = json.loads(line)["metadata"]
            path = root / imports.mempalace_path(metadata["wing"], metadata["room"])
            if path not in files:
                if len(files) >= MAX_OPEN_FILES:
                    for stream in files.values():
                        stream.close()
                    files.clear()
                path.parent.mkdir(parents=True, exist_ok=True)
                files[path] = path.open("a" if path in rooms else "w", encoding="utf-8")
                rooms.add(path)
            files[path].write(line)
            count += 1
    finally:
        for stream in files.values():
            stream.close()
    manifest = {
        "format_version": 1,
        "wings": len({path.parent for path in rooms}),
        "rooms": len(rooms),
        "drawers": count,
    }
    (root / "export-manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return count
