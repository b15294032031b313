from typing import Any

from django.core.management.base import CommandError, CommandParser

from dedup.commands import CastellanCommand
from dedup.policy.merge_gates import MERGE_TIERS
from review.models import SweepRun
from review.services import sweep_jobs, sweeps


class Command(CastellanCommand):
    help = (
        "Apply a sweep's proposals at a threshold: links, and merges for exact and normalized "
        "pairs whose gates all pass. One audited batch; sweep_reverse undoes it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run", type=int)
        parser.add_argument("--threshold", type=float, required=True)
        parser.add_argument("--tiers", nargs="*", help="Only these tiers (default: all).")
        parser.add_argument("--no-merge", action="store_true", help="Only links, never merges.")
        parser.add_argument("--discard-below", action="store_true")

    def handle(
        self,
        *args: Any,
        run: int,
        threshold: float,
        tiers: list[str] | None,
        no_merge: bool,
        discard_below: bool,
        **options: Any,
    ) -> None:
        sweep = SweepRun.objects.filter(pk=run).first()
        if sweep is None:
            raise CommandError(f"No sweep {run}.")
        sweep_jobs.under_way_refused(sweep)  # a worker's Apply or Reverse of it first
        done = sweeps.apply(
            sweep,
            threshold=threshold,
            tiers=tiers,
            merge_tiers=() if no_merge else MERGE_TIERS,
            discard_below=discard_below,
        )
        self.stdout.write(f"batch {done.batch}: linked {done.linked}, merged {done.merged}")
        self.stdout.write(f"discarded: {done.discarded}, recorded distinct: {done.distinct}")
        self.stdout.write(done.explained)
