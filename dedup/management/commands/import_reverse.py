import json
from typing import Any

from django.core.management.base import CommandError, CommandParser

from dedup import imports
from dedup.commands import CastellanCommand
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
        reversal = imports.import_reverse(imported=imported)
        self.stdout.write(json.dumps(reversal.as_dict(), indent=2))
