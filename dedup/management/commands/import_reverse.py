import json
from typing import Any

from django.core.management.base import CommandError, CommandParser

from dedup import imports
from dedup.commands import CastellanCommand
from dedup.errors import DomainError
from palace.models import Import


class Command(CastellanCommand):
    help = (
        "Reverse an import: remove the drawers it created and the links they made, audited; "
        "drawers built on since are kept and listed with the reasons."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("import_id", type=int)

    def handle(self, *args: Any, import_id: int, **options: Any) -> None:
        imported = Import.objects.filter(pk=import_id).first()
        if imported is None:
            raise CommandError(f"No import {import_id}.")
        try:
            reversal = imports.import_reverse(imported=imported)
        except DomainError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(json.dumps(reversal.as_dict(), indent=2))
