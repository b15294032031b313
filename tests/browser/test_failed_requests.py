"""A decision that fails says so: an item gone meanwhile shows the server's reason in place,
and a server error or a lost connection an alert asking for a reload, where the page had stayed
as it was, buttons live, saying nothing."""

import re

import pytest
from playwright.sync_api import expect

from dedup import services as write
from palace.models import AuditEntry
from tests.browser.test_keys import PORT, link_between, log_in, palace  # noqa: F401 - fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def decide(page):
    """How the page's decisions are answered: `decide.answer(route)` once set, the server until.
    The route is in place before the page opens: one added to a page already open was passed by
    once (on a CI machine under load its decision went to the server and was done)."""

    class Decide:
        answer = None

    def handle(route):
        (Decide.answer or (lambda route: route.continue_()))(route)

    page.route("**/decide", handle)
    return Decide


def open_item(page, live_server):
    link = link_between(PORT, PORT.replace("8080", "8081"))
    log_in(page, live_server, f"/items/d{link.pk}/")
    expect(page.locator("#main [data-item]")).to_be_visible()
    return link


def test_an_item_gone_meanwhile_says_so_in_place(page, live_server, palace):  # noqa: F811
    link = open_item(page, live_server)
    write.drawer_delete(drawer=link.newer)
    page.keyboard.press("m")
    expect(page.locator("#main").get_by_role("alert")).to_contain_text("gone")
    assert not AuditEntry.objects.filter(action__startswith="review.").exists()


def test_a_server_error_is_an_alert(page, live_server, palace, decide):  # noqa: F811
    open_item(page, live_server)
    decide.answer = lambda route: route.fulfill(status=500, body="oops")
    page.keyboard.press("x")
    alert = page.locator("#request-error")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("The server failed (500). Reload the page")


def test_a_busy_server_is_an_alert(page, live_server, palace, decide):  # noqa: F811
    open_item(page, live_server)
    decide.answer = lambda route: route.fulfill(status=503, body="busy")
    page.keyboard.press("x")
    expect(page.locator("#request-error")).to_contain_text("The server is busy (503).")


def test_a_lost_connection_is_an_alert_until_the_next_request(page, live_server, palace, decide):  # noqa: F811
    open_item(page, live_server)
    decide.answer = lambda route: route.abort()
    page.keyboard.press("x")
    alert = page.locator("#request-error")
    expect(alert).to_contain_text("The server could not be reached.")
    decide.answer = None
    page.wait_for_timeout(500)  # the console's pause after a swap does not apply: none came
    page.keyboard.press("x")
    expect(page.locator(".messages")).to_contain_text("Done: dismiss")
    expect(alert).to_be_hidden()


def test_a_whole_page_after_an_action_opens_on_its_message(page, live_server, palace):  # noqa: F811
    """Focus was left on <body>, and the message unread until found."""
    log_in(page, live_server, "/sweeps/")
    page.get_by_label("Threshold").fill("2")
    page.get_by_role("button", name="Start a sweep").click()
    focused = page.locator(":focus")
    expect(focused).to_have_class(re.compile("messages"))
    expect(focused).to_contain_text("threshold")


def test_a_whole_page_answer_is_not_swapped_into_the_page(page, live_server, palace, decide):  # noqa: F811
    """Django's own 404 page, header and menu included, landed inside the item's place."""
    open_item(page, live_server)
    whole = "<!doctype html><html><body><header>Castellan</header><h1>Not found</h1></body></html>"
    decide.answer = lambda route: route.fulfill(status=404, body=whole)
    page.keyboard.press("x")
    expect(page.locator("#request-error")).to_contain_text("That is not there (404).")
    expect(page.locator("#main header")).to_have_count(0)
