from django.core.management.base import BaseCommand

from dedup.maintenance import optimize_candidate_indexes


class Command(BaseCommand):
    help = "Bring the candidate indexes to their steady state (run after a bulk import)."

    def handle(self, *args: object, **options: object) -> None:
        self.stdout.write(optimize_candidate_indexes())
