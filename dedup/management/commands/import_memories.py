import contextlib
import json
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db import InterfaceError, OperationalError

from dedup import imports
from dedup.commands import CastellanCommand, progress_bar
from dedup.database import database_failure
from dedup.services.rooms import wing_to_import_into
from palace.models import Import


def parse_mapping(pairs: list[str]) -> dict[str, str]:
    """`field=path` pairs of the generic JSONL's mapping."""
    mapping = {}
    for pair in pairs:
        field, _, path = pair.partition("=")
        if field not in {"id", "content", "wing", "room", "name", "kind", "agent"} or not path:
            raise CommandError(
                f"--map {pair!r}: expected FIELD=PATH, FIELD one of id, content, "
                "wing, room, name, kind, agent."
            )
        mapping[field] = path
    return mapping


def checked_wing(wing: str | None) -> str | None:
    """The --wing given, checked once as a write's wing (`wing_to_import_into`, as the API's
    `wing`): given but blank, it would be ignored ("") or refuse every record (spaces); `*`,
    `a,b` or `x/y` made a wing a write refuses."""
    if wing is None:
        return None
    return wing_to_import_into(wing)


def recorded_wings(path: Path, arguments: dict[str, Any]) -> set[str]:
    """The wings the file's records name, recorded on the import as an API import records them:
    an agent key sees (and reverses) the import when it reaches every one of them."""
    try:
        return imports.record_wings(
            path, format=arguments["format"], wing=arguments["wing"], mapping=arguments["mapping"]
        )
    except imports.Unreadable as error:  # before anything is recorded
        raise CommandError(str(error)) from error


def unfinished(imported: Import, options: dict[str, Any]) -> str:
    """What to do about an import that stopped part-way, its committed chunks kept."""
    if options["dry_run"]:
        return ""
    return (
        f"; import {imported.pk} failed: import the file again to go on (what it stored is not "
        f"stored twice), or remove what it stored with import_reverse {imported.pk}"
    )


@contextlib.contextmanager
def stopped_by_sigterm() -> Iterator[None]:
    """SIGTERM (a process manager's stop) interrupts the import as Ctrl-C does, so the chunk under
    way rolls back, the import is marked failed and the command says how to go on, where the
    signal's default ended the process at once, the import left running for good."""

    def interrupt(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one: the import marked failed
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():  # a test's thread: no signals
        yield
        return
    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


class Command(CastellanCommand):
    help = (
        "Import memories from MemPalace, mem0, Castellan or any JSONL: every record goes through "
        "the write path; importing the same file again stores nothing. Prints the summary, the "
        "malformed records, and the import's id (to reverse it with import_reverse)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", required=True, choices=Import.Format.values)
        parser.add_argument("--map", action="append", default=[], metavar="FIELD=PATH")
        parser.add_argument("--wing", help="File every record into this wing.")
        parser.add_argument("--dry-run", action="store_true", help="Write nothing; count.")
        parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        if not path.exists():
            raise CommandError(f"{path} does not exist.")
        arguments = {
            "source": str(path),
            "format": options["format"],
            "wing": checked_wing(options["wing"]),
            "mapping": parse_mapping(options["map"]),
        }
        try:  # nothing is recorded for a file that cannot be read
            imports.check_readable(path, options["format"])
        except imports.Unreadable as error:
            raise CommandError(str(error)) from error
        if options["dry_run"]:
            imported = Import(
                source=arguments["source"],
                format=arguments["format"],
                options={"wing": arguments["wing"] or "", "mapping": arguments["mapping"]},
            )
        else:
            imported = imports.import_create(**arguments, wings=recorded_wings(path, arguments))
        bar = progress_bar(
            options["verbosity"],
            hidden=options["no_progress"],
            desc="importing",
            unit=" records",  # tqdm writes it after the count: "120 records", "80 records/s"
            total=None if options["no_progress"] else imports.records_in(path, options["format"]),
        )
        try:
            with stopped_by_sigterm(), bar as progress:

                def advance(records: int) -> None:
                    progress.update(records - progress.n)

                tally = imports.import_run(
                    imported, path=path, dry_run=options["dry_run"], on_progress=advance
                )
        except imports.Unreadable as error:  # part-way: what was committed stays, reversible
            raise CommandError(f"{error}{unfinished(imported, options)}") from error
        except KeyboardInterrupt as error:  # Ctrl-C, or SIGTERM (`stopped_by_sigterm`)
            raise CommandError(f"Interrupted{unfinished(imported, options)}.") from error
        except (OperationalError, InterfaceError) as error:
            failure = database_failure(error)
            if failure is None:
                raise
            raise CommandError(f"{failure[1]} ({error}){unfinished(imported, options)}") from error
        if tally.stopped:
            raise CommandError(
                f"Import {imported.pk} was reversed while it ran, and stopped. What it had written "
                "was removed; the reversal's report (the import's summary) lists any drawer kept."
            )
        result = {"import": imported.pk, "summary": tally.summary(), "malformed": tally.errors}
        self.stdout.write(json.dumps(result, indent=2))
