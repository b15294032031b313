"""The tester's small findings: an audit range that ends before it starts, a decided item's
"Next item", and the favicon."""

import pytest

from palace.models import AuditEntry

pytestmark = pytest.mark.django_db


def test_an_audit_range_ending_before_it_starts_is_an_error(as_curator, drawer_link):
    as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"})
    response = as_curator.get("/audit/", {"since": "2026-12-05", "until": "2026-12-01"})
    assert response.status_code == 400
    body = response.content.decode()
    assert "“From” must not be after “Until”." in body
    assert "No entries" not in body
    same_day = as_curator.get("/audit/", {"since": "2026-12-01", "until": "2026-12-01"})
    assert same_day.status_code == 200


@pytest.mark.parametrize("decided", ["first", "last"])
def test_a_decided_item_links_the_next_open_one(as_curator, drawer_link, entity_link, decided):
    first, last = f"d{drawer_link.pk}", f"e{entity_link.pk}"  # in queue order
    item, other = (first, last) if decided == "first" else (last, first)
    as_curator.post(f"/items/{item}/decide", {"action": "dismiss"})
    assert AuditEntry.objects.count() == 1
    body = as_curator.get(f"/items/{item}/").content.decode()
    assert f'href="/items/{other}/" data-key-next' in body


def test_the_favicon_is_linked_and_served(client, as_curator):
    page = as_curator.get("/").content.decode()
    assert 'rel="icon" href="/static/review/favicon.ico"' in page
    client.logout()
    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"] == "/static/review/favicon.ico"


def test_whitenoise_serves_the_favicon(client):
    response = client.get("/static/review/favicon.ico")
    assert response.status_code == 200
    assert (
        b"".join(response.streaming_content if response.streaming else [response.content])[:4]
        == b"\x00\x00\x01\x00"
    )


def test_the_search_box_holds_no_more_than_a_search_reads(as_curator, drawer_link):
    """A curator's trial: a long text pasted into the box made a request line past gunicorn's
    limit, answered 414 in the API's JSON."""
    page = as_curator.get("/").content.decode()
    assert 'name="q" maxlength="200"' in page


def test_an_item_whose_texts_hold_characters_that_do_not_show_says_which(as_curator):
    """A curator's trial: a U+202E override showed one text reversed in the diff and otherwise
    in the radio's label, and nothing told the curator the text held it."""
    from dedup import services

    text = "The deploy key rotates every ninety days on the build server."
    services.drawer_write_in(wing="ops", room="keys", content=text)
    (link,) = services.drawer_write_in(
        wing="ops", room="keys", content=text.replace("build", "\u202ebuild\u200b")
    ).links
    page = as_curator.get(f"/items/d{link.pk}/").content.decode()
    assert "The texts hold characters that do not show" in page
    assert "U+202E RIGHT-TO-LEFT OVERRIDE; U+200B ZERO WIDTH SPACE" in page


def test_an_item_of_plain_texts_and_emoji_warns_of_nothing_hidden(as_curator, drawer_link):
    page = as_curator.get(f"/items/d{drawer_link.pk}/").content.decode()
    assert "do not show" not in page
