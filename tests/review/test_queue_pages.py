"""The queue's pages at any size: the same queries on the first page, a later page and a filtered
page however many items are open, and bounded counts for filters on the linked rows."""

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dedup import services as write
from review import selectors
from review.selectors import queue

pytestmark = pytest.mark.django_db


def grow(n, start=0, room="r"):
    """n open drawer links in a room (one-letter variants of random texts)."""
    where = write.room_get_or_create(wing="w", room=room)
    for i in range(start, start + n):
        words = [f"{word:x}" for word in random.Random(i).choices(range(16**6, 16**7), k=12)]
        write.drawer_write(room=where, content=" ".join(words))
        write.drawer_write(room=where, content=" ".join([*words[:-1], words[-1][:-1] + "z"]))


def queries(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_a_later_html_page_answers_for_a_curator(as_curator, dedup_settings):
    """A later page has no counts: the bulk form's "every item" label must not need them."""
    grow(27)
    cursor = selectors.queue_page(selectors.QueueFilters()).next_cursor
    response = as_curator.get(f"/?cursor={cursor}")
    assert response.status_code == 200
    assert "every item of this filter</label>" in response.content.decode()


def test_queue_pages_keep_their_queries_as_the_queue_grows(as_curator, dedup_settings, monkeypatch):
    monkeypatch.setattr(queue, "COUNT_CAP", 5)  # past the caps, as at 1,000,000 open items
    monkeypatch.setattr(queue, "WINDOW", 3)
    grow(4)
    grow(3, start=4, room="other")
    cursor = selectors.queue_page(selectors.QueueFilters(), size=2).next_cursor
    urls = ["/", f"/?cursor={cursor}", "/?room=r", "/?rule=near", "/?order=uncertain", "/?q=z"]
    before = [queries(as_curator, url) for url in urls]
    grow(30, start=7)
    grow(10, start=37, room="other")
    assert [queries(as_curator, url) for url in urls] == before


def test_a_filter_on_the_linked_rows_counts_exactly_when_every_link_is_seen(
    curator, dedup_settings
):
    grow(3)
    grow(2, start=3, room="other")
    counts = selectors.queue_counts(selectors.QueueFilters(room="other"), curator)
    assert counts["drawer"] == 2
    assert not isinstance(counts["drawer"], queue.AtLeast)


def test_a_filter_on_the_linked_rows_past_the_window_counts_at_least(
    curator, dedup_settings, monkeypatch
):
    monkeypatch.setattr(queue, "WINDOW", 3)
    grow(3)
    grow(4, start=3, room="other")
    counts = selectors.queue_counts(selectors.QueueFilters(room="other"), curator)
    assert isinstance(counts["drawer"], queue.AtLeast)
    assert counts["drawer"] <= 3  # what the first three links held: a bound, never more


def test_a_rule_filter_counts_exactly_up_to_the_cap(curator, dedup_settings, monkeypatch):
    monkeypatch.setattr(queue, "COUNT_CAP", 3)
    grow(2)
    counts = selectors.queue_counts(selectors.QueueFilters(rule="near"), curator)
    assert counts["drawer"] == 2
    grow(5, start=2)
    counts = selectors.queue_counts(selectors.QueueFilters(rule="near"), curator)
    assert str(counts["drawer"]) == "3+"


def test_a_window_count_never_says_fewer_than_the_page_lists(curator, dedup_settings, monkeypatch):
    """The window sees none of the room's links, yet the page lists them: the count follows
    the page (exact when the page read all of them)."""
    monkeypatch.setattr(queue, "WINDOW", 0)
    grow(3)
    grow(2, start=3, room="other")
    filters = selectors.QueueFilters(room="other")
    page = selectors.queue_page(filters)
    counts = selectors.queue_counts(filters, curator, page=page)
    assert counts["drawer"] == len(page.items) == 2
    assert not isinstance(counts["drawer"], queue.AtLeast)


def test_a_window_count_past_the_page_is_at_least_what_the_page_read(
    curator, dedup_settings, monkeypatch
):
    monkeypatch.setattr(queue, "WINDOW", 0)
    grow(1)
    grow(4, start=1, room="other")
    filters = selectors.QueueFilters(room="other")
    page = selectors.queue_page(filters, size=2)
    counts = selectors.queue_counts(filters, curator, page=page)
    assert str(counts["drawer"]) == "3+"  # two listed and the one that makes a next page


def test_the_queue_page_shows_a_count_that_agrees_with_its_rows(
    as_curator, dedup_settings, monkeypatch
):
    monkeypatch.setattr(queue, "WINDOW", 0)
    grow(3)
    grow(2, start=3, room="other")
    page = as_curator.get("/?room=other").content.decode()
    assert "2 drawer links" in page


def test_an_item_count_is_exact_for_each_uncertain_range_read_to_its_end(
    curator, dedup_settings, monkeypatch
):
    monkeypatch.setattr(queue, "WINDOW", 0)
    grow(2, room="other")
    filters = selectors.QueueFilters(room="other", order="uncertain")
    counts = selectors.queue_counts(filters, curator, page=selectors.queue_page(filters))
    assert counts["drawer"] == 2
