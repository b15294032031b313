from typing import Any

from django.conf import settings
from django.core.management.base import CommandParser

from dedup.commands import CastellanCommand, progress_bar
from dedup.validation import place_name
from review.services import sweeps
from review.tasks import run_sweep


class Command(CastellanCommand):
    help = (
        "Find duplicates already in the store and write proposals into quarantine (nothing is "
        "linked or merged). Compares current drawers within each room, and each agent's diary on "
        "its own; --entities proposes possibly_same_as pairs among existing entities."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--wing", help="Only this wing (default: every wing).")
        parser.add_argument("--room", help="Only this room of the wing.")
        parser.add_argument("--threshold", type=float, default=None)
        kinds = parser.add_mutually_exclusive_group()
        kinds.add_argument(
            "--same-kind",
            dest="same_kind",
            action="store_true",
            default=True,
            help="Skip pairs whose memory kinds differ (the default).",
        )
        kinds.add_argument(
            "--any-kind",
            dest="same_kind",
            action="store_false",
            help="Propose pairs whatever their kinds (the gate is still recorded).",
        )
        parser.add_argument("--entities", action="store_true")
        parser.add_argument(
            "--background",
            action="store_true",
            help="Enqueue the sweep for `manage.py db_worker` instead of running it here.",
        )
        parser.add_argument(
            "--resume",
            type=int,
            metavar="RUN",
            help="Go on with an interrupted or failed run: its unfinished parts resume after "
            "their last committed batch.",
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(
        self,
        *args: Any,
        wing: str | None,
        room: str | None,
        threshold: float | None,
        same_kind: bool,
        entities: bool,
        background: bool,
        no_progress: bool,
        resume: int | None,
        **options: Any,
    ) -> None:
        for field, value in (("wing", wing), ("room", room)):
            if value is not None:  # given, even empty: not the whole store by a typo
                place_name(value, field)
        if resume is not None and background:  # as the page's Resume: never its work twice
            run = sweeps.queue_resumed(resume, run_sweep.enqueue)
            self.stdout.write(f"sweep {run.pk} queued to resume; `manage.py db_worker` runs it")
            return
        run = (
            sweeps.run_to_resume(resume)
            if resume is not None
            else sweeps.start(
                wing=wing or "",
                room=room or "",
                threshold=settings.CASTELLAN_DEDUP_NEAR_THRESHOLD
                if threshold is None
                else threshold,
                same_kind=same_kind,
                entities=entities,
            )
        )
        if background:
            result = run_sweep.enqueue(run.pk)
            self.stdout.write(
                f"sweep {run.pk} queued (task {result.id}); `manage.py db_worker` runs it"
            )
            return
        with progress_bar(
            options["verbosity"], hidden=no_progress, desc=f"sweep {run.pk}", unit=" rows"
        ) as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.n = done
                bar.refresh()

            sweeps.execute(run, progress=progress)
        self.stdout.write(f"sweep {run.pk}: {run.done} compared")
        for tier, count in sorted(run.counts.items()):
            self.stdout.write(f"{tier}: {count}")
        self.stdout.write(f"proposals: {run.proposals.count()}")
