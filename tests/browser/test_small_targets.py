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
