from typing import Any

from dedup.commands import CastellanCommand
from dedup.maintenance import optimize_candidate_indexes


class Command(CastellanCommand):
    help = "Bring the candidate indexes to their steady state (run after a bulk import)."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(optimize_candidate_indexes())
