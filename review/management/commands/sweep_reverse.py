from django.core.management.base import BaseCommand, CommandError

from review.models import SweepRun
from review.services import sweeps


class Command(BaseCommand):
    help = (
        "Undo everything a sweep's application did, to the exact prior state, in one audited batch."
    )

    def add_arguments(self, parser):
        parser.add_argument("run", type=int)

    def handle(self, *args, run, **options):
        sweep = SweepRun.objects.filter(pk=run).first()
        if sweep is None:
            raise CommandError(f"No sweep {run}.")
        self.stdout.write(f"undone: {sweeps.reverse(sweep)}")
