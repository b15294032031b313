"""The queue's counts: exact up to the cap, "at least" past it, and counted on the first page only,
so no page counts every open item."""

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dedup import services as write
from review import selectors
from review.selectors import queue
from tests.conftest import person_client

pytestmark = pytest.mark.django_db


def grow(n, start=0):
    """n open drawer links."""
    room = write.room_get_or_create(wing="w", room="r")
    for i in range(start, start + n):
        words = [f"{word:x}" for word in random.Random(i).choices(range(16**6, 16**7), k=12)]
        write.drawer_write(room=room, content=" ".join(words))
        write.drawer_write(room=room, content=" ".join([*words[:-1], words[-1][:-1] + "z"]))


def test_counts_are_exact_below_the_cap(curator, dedup_settings):
    grow(5)
    body = person_client(curator).get("/api/review/queue").json()
    assert body["counts"]["drawer"] == 5
    assert body["counts"]["open"] == 5


def test_counts_past_the_cap_say_at_least(curator, dedup_settings, monkeypatch):
    monkeypatch.setattr(queue, "COUNT_CAP", 3)
    grow(5)
    counts = selectors.queue_counts(selectors.QueueFilters(), curator)
    assert isinstance(counts["drawer"], queue.AtLeast)
    assert counts["drawer"] == 3
    assert str(counts["open"]) == "3+"
    assert counts["entity"] == 0


def test_the_api_names_the_counts_that_are_lower_bounds(curator, dedup_settings, monkeypatch):
    """Past the cap and past the page (as the console's test below)."""
    monkeypatch.setattr(queue, "COUNT_CAP", 3)
    grow(27)
    body = person_client(curator).get("/api/review/queue").json()
    assert "drawer" in body["counts_at_least"]


def test_the_api_names_no_exact_count_a_lower_bound(curator, dedup_settings):
    grow(5)
    body = person_client(curator).get("/api/review/queue").json()
    assert body["counts_at_least"] == []


def test_the_console_shows_a_capped_count(client, curator, dedup_settings, monkeypatch):
    """Past the cap, and past the page: at least the 26 rows the page read (25 and the next)."""
    monkeypatch.setattr(queue, "COUNT_CAP", 3)
    grow(27)
    client.force_login(curator)
    assert "<strong>26+</strong> open" in client.get("/").content.decode()


def test_a_count_below_what_the_page_read_is_the_page_s(
    client, curator, dedup_settings, monkeypatch
):
    """The page read every open link (5, under a page): the count is exact, not the cap's 3+."""
    monkeypatch.setattr(queue, "COUNT_CAP", 3)
    grow(5)
    client.force_login(curator)
    assert "<strong>5</strong> open" in client.get("/").content.decode()


def test_later_pages_count_nothing(curator, dedup_settings):
    grow(30)
    api = person_client(curator)
    first = api.get("/api/review/queue").json()
    second = api.get("/api/review/queue", {"cursor": first["next"]}).json()
    assert first["counts"]["drawer"] == 30
    assert second["counts"] == {}
    assert len(second["items"]) == 5


def test_a_later_page_runs_fewer_queries_whatever_the_size(curator, dedup_settings):
    api = person_client(curator)

    def queries(path_params):
        with CaptureQueriesContext(connection) as captured:
            assert api.get("/api/review/queue", path_params).status_code == 200
        return len(captured)

    grow(27)
    cursor = api.get("/api/review/queue").json()["next"]
    first, later = queries({}), queries({"cursor": cursor})
    grow(30, start=27)
    assert queries({"cursor": cursor}) == later
    assert later < first
