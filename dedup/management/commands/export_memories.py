import json
from pathlib import Path
from typing import IO, Any

from django.core.management.base import CommandError, CommandParser

from dedup import imports
from dedup.commands import CastellanCommand

MAX_OPEN_FILES = 100


class Command(CastellanCommand):
    help = (
        "Export drawers, links, entities, mentions and decisions as Castellan JSONL (or the "
        "current drawers as MemPalace JSONL) to OUT, written a line at a time. MemPalace JSONL "
        "into a directory (OUT existing, or ending in /) is a tree like MemPalace's own export, "
        "<wing>/<room>.jsonl and export-manifest.json, which MemPalace's importer reads."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("out")
        parser.add_argument("--wing")
        parser.add_argument("--format", default="castellan", choices=imports.EXPORT_FORMATS)

    def handle(self, *args: Any, out: str, wing: str | None, format: str, **options: Any) -> None:
        try:
            count = self._export(out, wing, format)
        except OSError as error:  # a directory that is not there, a full disk...
            raise CommandError(f"cannot write {out}: {error.strerror or error}") from error
        self.stdout.write(f"{count} lines written to {out}")

    def _export(self, out: str, wing: str | None, format: str) -> int:
        lines = imports.export_lines(wing=wing, format=format)
        if format == "mempalace" and (out.endswith("/") or Path(out).is_dir()):
            count = write_tree(Path(out), lines)
        else:
            count = 0
            with Path(out).open("w", encoding="utf-8") as stream:
                for line in lines:
                    stream.write(line)
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
