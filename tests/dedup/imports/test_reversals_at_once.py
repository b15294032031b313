"""Two reversals at once, of imports that share nothing but a wing, on PostgreSQL: the last
place's removal needed each to know what the other left (a trial left the wing with no room).
Reversals take their turn first, so each decides knowing what those before it left."""

import contextlib
import threading

import pytest
from django.db import connection

from dedup import imports
from dedup.imports import reverse as reverse_module
from palace.models import AuditEntry, Room, Wing
from tests.dedup.imports.test_reversal_places import ran, records
from tests.races import race

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL"
    ),
]


def test_two_reversals_of_one_wing_at_once_leave_no_wing(tmp_path, monkeypatch):
    """The first import made the wing and a room, the second another room in it. Each reversal,
    once at its places, waits (up to a second) for the other to be at its own: without turns
    both were, each removed its room and kept the wing, seeing the other's room still there."""
    first = ran(records(tmp_path, "1.jsonl", ("w", "a", 1)))
    second = ran(records(tmp_path, "2.jsonl", ("w", "b", 2)))
    wing = Wing.objects.get()
    both_at_places = threading.Barrier(2, timeout=1)
    removed = reverse_module.places_removed

    def meeting_then_removed(*args, **kwargs):
        with contextlib.suppress(threading.BrokenBarrierError):  # the other is waiting for its turn
            both_at_places.wait()
        return removed(*args, **kwargs)

    monkeypatch.setattr(reverse_module, "places_removed", meeting_then_removed)
    race(  # an error of either (a deadlock, a lock timeout) is raised here
        lambda: imports.import_reverse(imported=first),
        lambda: imports.import_reverse(imported=second),
    )
    assert not Room.objects.exists()
    assert not Wing.objects.exists()
    audited = AuditEntry.objects.filter(action="wing.delete")
    assert list(audited.values_list("target_id", flat=True)) == [str(wing.pk)]
