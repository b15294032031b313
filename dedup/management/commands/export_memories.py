from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from dedup import imports


class Command(BaseCommand):
    help = (
        "Export drawers, links, entities, mentions and decisions as Castellan JSONL (or the "
        "current drawers as MemPalace JSONL) to OUT, written a line at a time."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("out", type=Path)
        parser.add_argument("--wing")
        parser.add_argument("--format", default="castellan", choices=imports.EXPORT_FORMATS)

    def handle(self, *args: Any, out: Path, wing: str | None, format: str, **options: Any) -> None:
        count = 0
        with out.open("w", encoding="utf-8") as stream:
            for line in imports.export_lines(wing=wing, format=format):
                stream.write(line)
                count += 1
        self.stdout.write(f"{count} lines written to {out}")
