"""No console page shows template source: a Django `{# #}` comment cannot span lines, and one that
did was printed on the queue page. Each main page is rendered and searched for `{#`."""

import pytest

from palace.models import AuditEntry, DrawerLink, EntityLink
from tests.review.clusters_data import five_drawers
from tests.review.test_sweeps import palace as legacy_palace  # noqa: F401
from tests.review.test_sweeps import run_sweep

pytestmark = pytest.mark.django_db


@pytest.fixture
def pages(as_curator, legacy_palace, drawer_link, entity_link):  # noqa: F811
    drawers = five_drawers()
    cluster = f"d{DrawerLink.objects.filter(newer=drawers[1]).get().pk}"
    run = run_sweep(wing="ops")
    as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"})
    as_curator.post("/bulk", {"items": [f"e{entity_link.pk}"], "action": "dismiss"})
    batch = AuditEntry.objects.exclude(batch=None).values_list("batch", flat=True).first()
    return [
        "/",
        "/?type=cluster",
        "/?min_similarity=0.9&max_similarity=0.1",  # an error shown on the page
        f"/items/d{drawer_link.pk}/",
        f"/items/e{EntityLink.objects.first().pk}/",
        f"/items/p{run.proposals.first().pk}/",
        f"/clusters/{cluster}/",
        f"/batches/{batch}/",
        "/audit/",
        "/stats/",
        "/sweeps/",
        f"/sweeps/{run.pk}/",
    ]


def test_no_page_shows_a_template_comment(as_curator, pages, client):
    for url in pages:
        response = as_curator.get(url)
        assert response.status_code in (200, 400), url
        body = response.content.decode()
        assert "{#" not in body, url
        assert "{%" not in body, url
    client.logout()
    assert "{#" not in client.get("/accounts/login/").content.decode()


def test_right_to_left_text_takes_its_own_direction(as_curator, dedup_settings):
    """A pair of Hebrew texts (with English words inside): the queue row's diff and the item
    page's texts are laid out by their own first strong letter (`dir="auto"`), not the page's
    left-to-right, which scrambled the order of their words."""
    from dedup import services

    room = services.room_get_or_create(wing="i18n", room="he")
    text = "הצוות בחר ב-Redis 7.2 לשכבת המטמון של שירות ההזמנות החדש"
    services.drawer_write(room=room, content=text)
    (link,) = services.drawer_write(room=room, content=text.replace("החדש", "הישן")).links
    queue = as_curator.get("/").content.decode()
    assert '<span class="diff" dir="auto">' in queue
    item = as_curator.get(f"/items/d{link.pk}/").content.decode()
    assert item.count('<p class="content" dir="auto">') == 2
