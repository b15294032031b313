"""The precision table and the queue's history are counted by the database (they read every
link: 1.2 s at 146,000 links), in a number of queries that does not grow with the links, and
say what counting each link said, bands' edges included."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from dedup import services
from palace.models import DrawerLink
from review.selectors import stats
from tests.dedup.drawers_data import bulk_drawers

pytestmark = pytest.mark.django_db
SIMILARITIES = (0.5, 0.899, 0.9, 0.949, 0.95, 0.98, 0.999, 1.0)
STATUSES = ("open", "merged", "dismissed")


def links(count):
    room = services.room_get_or_create(wing="w", room="r")
    drawers = bulk_drawers(room, [f"Fact {n}: it holds {n * 7919}." for n in range(count + 1)])
    now = timezone.now()
    made = []
    for n in range(count):
        status = STATUSES[n % 3]
        made.append(
            DrawerLink(
                newer=drawers[n + 1],
                older=drawers[0],
                verdict="near" if n % 2 else "normalized",
                similarity=SIMILARITIES[n % len(SIMILARITIES)],
                status=status,
                created_at=now - timedelta(days=n % 20, hours=1),
                decided_at=None if status == "open" else now - timedelta(days=n % 7),
            )
        )
    return DrawerLink.objects.bulk_create(made)


def counted_one_by_one():
    tally = stats._Tally()
    for link in DrawerLink.objects.all():
        tally.add(link.verdict, stats.similarity_band(link.similarity), link.status)
    return stats._precision_rows(tally)


def history_one_by_one(days=14):
    now = timezone.now()
    rows = list(DrawerLink.objects.values_list("created_at", "decided_at"))
    points = []
    for back in range(days - 1, -1, -1):
        moment = now - timedelta(days=back)
        made = sum(1 for created, _ in rows if created <= moment)
        decided = sum(1 for _, at in rows if at is not None and at <= moment)
        points.append(made - decided)
    return points


def test_the_counts_are_what_counting_each_link_said():
    links(48)
    found = stats.precision_stats()
    assert found["tiers"] == counted_one_by_one()
    assert [point["open"] for point in found["queue"]] == history_one_by_one()


def test_the_queries_do_not_grow_with_the_links():
    links(6)
    with CaptureQueriesContext(connection) as few:
        stats.precision_stats()
    DrawerLink.objects.all().delete()
    links(60)
    with CaptureQueriesContext(connection) as many:
        stats.precision_stats()
    assert len(many) == len(few)
