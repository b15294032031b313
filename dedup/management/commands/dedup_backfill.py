import sys
from typing import Any

from django.core.management.base import CommandParser
from django.db import connection, transaction
from tqdm import tqdm

from dedup import backfill
from dedup.commands import CastellanCommand
from palace.models import Drawer, Entity, EntityAlias


class Command(CastellanCommand):
    help = (
        "Fill the fingerprints, index texts and entity keys of rows written before they "
        "existed. Merges nothing; running it twice changes nothing. With --signatures, also "
        "compute every entity signature again (in one transaction)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-progress", action="store_true", help="Hide the progress bars.")
        parser.add_argument(
            "--signatures",
            action="store_true",
            help=(
                "Compute every entity's and person alias's signatures again, as the write path "
                "writes them: after a release's processes wrote signatures of another form "
                "while dedup/0011 ran."
            ),
        )

    def handle(self, *args: Any, no_progress: bool, signatures: bool, **options: Any) -> None:
        with tqdm(
            total=backfill.drawers_needing_backfill(Drawer).count(),
            desc="drawers",
            unit="row",
            disable=no_progress,
            file=sys.stderr,
        ) as bar:
            drawers = backfill.backfill_fingerprints(Drawer, progress=bar.update)
        with tqdm(
            total=backfill.drawers_lacking_index_text(),
            desc="index texts",
            unit="row",
            disable=no_progress,
            file=sys.stderr,
        ) as bar:
            indexed_texts = backfill.backfill_index_text(Drawer, progress=bar.update)
        unkeyed = Entity.objects.filter(key="").count() + EntityAlias.objects.filter(key="").count()
        with tqdm(
            total=unkeyed,
            desc="entities",
            unit="row",
            disable=no_progress,
            file=sys.stderr,
        ) as bar:
            entities = backfill.backfill_entity_keys(Entity, EntityAlias, progress=bar.update)
        self.stdout.write(f"fingerprints filled: {drawers}")
        self.stdout.write(f"index texts filled: {indexed_texts}")
        self.stdout.write(f"entity keys filled: {entities}")
        if not signatures:
            return
        with (
            transaction.atomic(),
            tqdm(
                total=backfill.signature_owners(Entity, EntityAlias),
                desc="signatures",
                unit="row",
                disable=no_progress,
                file=sys.stderr,
            ) as bar,
        ):
            indexed = backfill.recompute_signatures(Entity, EntityAlias, progress=bar.update)
        self.stdout.write(f"entity signatures computed again: {indexed} keys")
        if connection.vendor == "postgresql":
            # VACUUM cannot run in the transaction above (nor in a test's).
            self.stdout.write(
                "run `manage.py dedup_maintain` next: until it (or autovacuum) has marked the "
                "new rows visible, the signature lookups read the table beside their index"
            )
