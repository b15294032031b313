"""The decide view's queries (issue 13, capability 15): deciding an item and serving the next one
in the same response costs a fixed number of queries, whatever the queue's size and the holds
other curators have; the next item and the one after it are read in one queue read."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from dedup import services as write
from review.forms import QueueFilterForm
from review.models import ItemHold
from review.selectors import queue_page

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
# Session, user and permissions; the decision, its audit row and the hold let go, in one
# transaction; the next two untaken items in one read (holds, then the queue's drawer and entity
# runs); the next item's detail and its hold; the session saved (savepoints counted: the test
# runs in a transaction). It was 31 with the queue read twice and the hold's deletes apart;
# 25 once taking a hold stopped wrapping its clean-up and upsert in one transaction (a deadlock);
# 27 with the Undo offered a row of its own (upserted, the curator's oldest beyond 20 dropped),
# where a list in the session lost one of two tabs' offers.
DECIDE_QUERIES = 27


def write_links(count: int, start: int = 0) -> None:
    room = write.room_get_or_create(wing="ops", room="dev")
    for n in range(start, start + count):
        text = f"Backup number {n} runs nightly at two in the morning and is kept for thirty days."
        write.drawer_write(room=room, content=text)
        write.drawer_write(room=room, content=text.replace("the", "teh", 1))


def queue_order() -> list[str]:
    return [str(item.ref) for item in queue_page(QueueFilterForm({}).filters(), size=100).items]


def decide_first(client) -> int:
    first = queue_order()[0]
    client.get(f"/items/{first}/")
    with CaptureQueriesContext(connection) as captured:
        response = client.post(f"/items/{first}/decide", {"action": "dismiss"}, **HTMX)
    assert response.status_code == 200
    assert response["HX-Push-Url"].startswith("/items/")  # the next item, served in place
    return len(captured)


def test_deciding_costs_a_fixed_number_of_queries(client, curator, dedup_settings):
    write_links(3)
    client.force_login(curator)
    decide_first(client)  # the first request of a session reads what later ones have cached
    assert decide_first(client) == DECIDE_QUERIES


def test_deciding_costs_the_same_with_a_longer_queue_and_held_items(
    client, curator, other_curator, dedup_settings
):
    write_links(3)
    client.force_login(curator)
    decide_first(client)
    small = decide_first(client)
    write_links(20, start=3)
    for item in queue_order()[1:6]:  # the next items are held by someone else: passed
        ItemHold.objects.create(
            item=item, curator=other_curator, expires_at=timezone.now() + timedelta(minutes=2)
        )
    assert decide_first(client) == small
