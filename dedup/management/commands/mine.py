from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from dedup import mining
from dedup.commands import CastellanCommand, progress_bar


class Command(CastellanCommand):
    help = (
        "Mine text and Markdown files into a wing: every chunk is stored and linked to what it "
        "resembles. Re-running on unchanged files stores nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--wing", required=True)
        parser.add_argument("--room", help="Room to file into (default: the folder's name).")
        parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")

    def handle(
        self,
        *args: Any,
        path: Path,
        wing: str,
        room: str | None,
        no_progress: bool,
        **options: Any,
    ) -> None:
        if not path.exists():
            raise CommandError(f"{path} does not exist.")
        # A wing or room the write path would refuse ends the run before it starts.
        wing, room = mining.place_of(path, wing=wing, room=room)
        documents = mining.documents_under(path.resolve())
        bar = progress_bar(
            options["verbosity"],
            hidden=no_progress,
            total=len(documents),
            unit=" documents",
            desc="mining",
        )
        with bar as progress:
            result = mining.mine(
                path, wing=wing, room=room, on_document=lambda _: progress.update()
            )
        for key, value in result.as_dict().items():
            self.stdout.write(f"{key}: {value}")
