"""What every Castellan management command shares: a refusal of the services (a `DomainError`,
which the API answers with a 4xx) ends the command with its message, and a database that is busy
or cannot be reached with one line saying so, as the API answers 503 (a CommandError, exit
status 1), rather than a traceback. What the failing transaction held is not written; a long
command (an import, mining, a sweep) keeps the chunks it committed before, and says how to go on
(`import_memories` names the failed import, which can be reversed). Any other database error is
a fault, shown as one."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

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
