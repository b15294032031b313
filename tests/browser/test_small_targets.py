"""At 375 px the audit log's batch links are targets of at least 24 x 24 px (README: buttons and
controlling links); they were 38 x 15."""

import pytest

from palace.models import DrawerLink
from review import services
from tests.browser.test_keys import log_in, palace  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_audit_logs_batch_links_are_24_px_at_375_px(page, live_server, palace):  # noqa: F811
    items = [f"d{pk}" for pk in DrawerLink.objects.values_list("pk", flat=True)[:2]]
    services.decide_many(items=items, action="dismiss", actor=palace)
    page.set_viewport_size({"width": 375, "height": 812})
    log_in(page, live_server, "/audit/")
    links = page.locator("table.audit a", has_text="batch")
    assert links.count() == 2
    for n in range(2):
        box = links.nth(n).bounding_box()
        assert box["width"] >= 24, box
        assert box["height"] >= 24, box


# A link's height as a target: its shortest line box (a link broken over two lines is two
# targets, each as tall as one line).
HEIGHT = "e => Math.min(...Array.from(e.getClientRects()).map(r => r.height))"


def test_the_batch_pages_and_the_queues_links_are_24_px_at_375_px(page, live_server, palace):  # noqa: F811
    """`More clusters`, `Queue` (the batch page) and `group into clusters` (the queue) were
    19 px tall."""
    items = [f"d{pk}" for pk in DrawerLink.objects.values_list("pk", flat=True)[:2]]
    batch = services.decide_many(items=items, action="dismiss", actor=palace).batch
    page.set_viewport_size({"width": 375, "height": 812})
    log_in(page, live_server, f"/batches/{batch}/")
    main = page.locator("main")
    heights = {
        name: main.get_by_role("link", name=name, exact=True).evaluate(HEIGHT)
        for name in ("More clusters", "Queue")
    }
    page.goto(f"{live_server.url}/")
    heights["group into clusters"] = main.get_by_role("link", name="group into clusters").evaluate(
        HEIGHT
    )
    assert {name: height for name, height in heights.items() if height < 24} == {}
