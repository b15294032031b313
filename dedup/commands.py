"""What every Castellan management command shares: a refusal of the services (a `DomainError`,
which the API answers with a 4xx) ends the command with its message, and a database that is busy
or cannot be reached with one line saying so, as the API answers 503 (a CommandError, exit
status 1), rather than a traceback. What the failing transaction held is not written; a long
command (an import, mining, a sweep) keeps the chunks it committed before, and says how to go on
(`import_memories` names the failed import, which can be reversed). Any other database error is
a fault, shown as one."""

from __future__ import annotations

import logging
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from dedup.database import database_failure
from dedup.errors import DomainError


class CastellanCommand(BaseCommand):
    def execute(self, *args: Any, **options: Any) -> str | None:
        try:
            return super().execute(*args, **options)
        except DomainError as error:  # what the API answers 4xx: a wrong argument, a conflict
            raise CommandError(error.message) from error
        except Exception as error:
            failure = database_failure(error)
            if failure is None:
                raise
            raise CommandError(f"{failure[1]} ({str(error).strip()})") from error


def command_line(*arguments: str) -> str:
    """A `manage.py` command to print for the reader to run, as it runs from where they are:
    this interpreter and the project's manage.py (relative to the working directory when under
    it), with what the settings need in front: `DEBUG=true` on a development machine (as `make
    run` runs them), `honcho run` beside a `.env` (as `make serve` reads it; README "Deploy"),
    else the environment as it is. Each argument quoted for the shell (`'*'`)."""

    def shown(path: Path) -> str:
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)

    python = Path(sys.executable)
    words = [shown(python), shown(Path(settings.BASE_DIR) / "manage.py"), *arguments]
    if settings.DEBUG:
        prefix = "DEBUG=true "
    elif (Path.cwd() / ".env").exists():
        prefix = f"{shlex.quote(shown(python.parent / 'honcho'))} run "
    else:
        prefix = ""
    return prefix + shlex.join(words)


# The write path's logger: a line a drawer stored and linked, an entity converged.
PER_RECORD_LOGGER = "castellan.dedup"


@contextmanager
def progress_bar(verbosity: int, *, hidden: bool | None, **bar: Any) -> Iterator[tqdm]:
    """A long command's progress bar, on stderr (stdout keeps its results). Log lines print
    above the bar rather than through it, and at the default verbosity the write path's line a
    record (one per drawer linked: 100,000 lines for an import of as many variants) is left
    out, as the command's summary counts them; `-v 2` shows each. Warnings always show."""
    per_record = logging.getLogger(PER_RECORD_LOGGER)
    level = per_record.level
    if verbosity < 2:
        per_record.setLevel(max(logging.WARNING, per_record.getEffectiveLevel()))
    try:
        with tqdm(file=sys.stderr, disable=hidden, **bar) as progress, logging_redirect_tqdm():
            yield progress
    finally:
        per_record.setLevel(level)
