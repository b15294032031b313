from typing import Any

from django.core.management.base import CommandError, CommandParser

from dedup.commands import CastellanCommand
from review.models import SweepRun
from review.services import sweep_jobs, sweeps


class Command(CastellanCommand):
    help = (
        "Undo everything a sweep's application did, to the exact prior state, in one audited batch."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run", type=int)

    def handle(self, *args: Any, run: int, **options: Any) -> None:
        sweep = SweepRun.objects.filter(pk=run).first()
        if sweep is None:
            raise CommandError(f"No sweep {run}.")
        sweep_jobs.under_way_refused(sweep)  # a worker's Apply or Reverse of it first
        reversed_ = sweeps.reverse(sweep)
        self.stdout.write(f"undone: {reversed_.undone}")
        if reversed_.not_restored:
            self.stdout.write(f"undone in part: {reversed_.explained}")
