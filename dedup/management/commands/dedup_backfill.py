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
        with _bar(backfill.drawers_needing_backfill(Drawer).count(), "drawers", no_progress) as bar:
            drawers = backfill.backfill_fingerprints(Drawer, progress=bar.update)
        with _bar(backfill.drawers_lacking_index_text(), "index texts", no_progress) as bar:
            indexed_texts = backfill.backfill_index_text(Drawer, progress=bar.update)
        unkeyed = Entity.objects.filter(key="").count() + EntityAlias.objects.filter(key="").count()
        with _bar(unkeyed, "entities", no_progress) as bar:
            entities = backfill.backfill_entity_keys(Entity, EntityAlias, progress=bar.update)
        self.stdout.write(f"fingerprints filled: {drawers}")
        self.stdout.write(f"index texts filled: {indexed_texts}")
        self.stdout.write(f"entity keys filled: {entities}")
        if not signatures:
            return
        with (
            transaction.atomic(),
            _bar(backfill.signature_owners(Entity, EntityAlias), "signatures", no_progress) as bar,
        ):
            indexed = backfill.recompute_signatures(Entity, EntityAlias, progress=bar.update)
        self.stdout.write(f"entity signatures computed again: {indexed} keys")
        if connection.vendor == "postgresql":
            # VACUUM cannot run in the transaction above (nor in a test's).
            self.stdout.write(
                "run `manage.py dedup_maintain` next: until it (or autovacuum) has marked the "
                "new rows visible, the signature lookups read the table beside their index"
            )


def _bar(total: int, desc: str, hidden: bool) -> tqdm:
    """A progress bar of rows on stderr (stdout keeps the counts)."""
    return tqdm(total=total, desc=desc, unit=" rows", disable=hidden, file=sys.stderr)
