from typing import Any

from dedup.commands import CastellanCommand
from dedup.twins import place_twins


class Command(CastellanCommand):
    help = (
        "List the wings, and the rooms of one wing, whose names look alike but are stored apart: "
        "the same once composed (NFC) without the characters that show nothing, as a new name "
        "is given. Changes nothing; move or rename them in the admin."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        twins = place_twins()
        for twin in twins:
            self.stdout.write(twin.describe())
        self.stdout.write(f"names that look alike: {len(twins)}")
