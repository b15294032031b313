"""A keyboard decision costs one round trip (issue 13, capability 15): the next item comes back
with the decision, and it is the page the browser would have fetched."""

import re

import pytest

from dedup import services as write

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def three_links(dedup_settings):
    room = write.room_get_or_create(wing="ops", room="dev")
    links = []
    for text in (
        "For local development always use port 8080 for the API server.",
        "Backups run nightly at two in the morning and are kept for thirty days.",
        "Katarina wants code reviews before lunch, never on Friday afternoons.",
    ):
        write.drawer_write(room=room, content=text)
        (link,) = write.drawer_write(room=room, content=text.replace(".", "!")).links
        links.append(link)
    return links


def next_link(body: str) -> str:
    return re.search(r'href="([^"]+)" data-key-next', body)[1]


def test_the_next_item_returned_with_a_decision_is_the_page_itself(client, curator, three_links):
    client.force_login(curator)
    first = client.get("/", {"order": "newest"}).content.decode()
    ref = re.search(r'href="/items/(d\d+)/\?order=newest"', first)[1]
    response = client.post(
        f"/items/{ref}/decide", {"action": "dismiss", "query": "order=newest"}, **HTMX
    )
    url = response["HX-Push-Url"]
    page = client.get(url, **HTMX).content.decode()
    body = response.content.decode()
    assert re.search(r'data-item="(\w+)"', body)[1] == re.search(r'data-item="(\w+)"', page)[1]
    assert next_link(body) == next_link(page)


def test_the_last_decision_sends_the_browser_to_the_queue(client, curator, three_links):
    client.force_login(curator)
    for link in three_links:
        response = client.post(f"/items/d{link.pk}/decide", {"action": "dismiss"}, **HTMX)
    assert response["HX-Redirect"] == "/"
