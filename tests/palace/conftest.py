"""What the palace's admin tests share: a room to write drawers into."""

import pytest

from dedup import services


@pytest.fixture
def room(dedup_settings):
    """The room ops/backups, empty."""
    return services.room_get_or_create(wing="ops", room="backups")
