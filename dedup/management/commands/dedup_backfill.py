import sys

from django.core.management.base import BaseCommand, CommandParser
from tqdm import tqdm

from dedup import backfill
from palace.models import Drawer, Entity, EntityAlias


class Command(BaseCommand):
    help = (
        "Fill the fingerprints and entity keys of rows written before they existed. Merges "
        "nothing; running it twice changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-progress", action="store_true", help="Hide the progress bars.")

    def handle(self, *args: object, no_progress: bool, **options: object) -> None:
        with tqdm(
            total=backfill.drawers_needing_backfill(Drawer).count(),
            desc="drawers",
            unit="row",
            disable=no_progress,
            file=sys.stderr,
        ) as bar:
            drawers = backfill.backfill_fingerprints(Drawer, progress=bar.update)
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
        self.stdout.write(f"entity keys filled: {entities}")
