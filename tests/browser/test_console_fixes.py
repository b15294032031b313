"""The tester's keyboard and navigation findings, in a real browser: keys behind the ? dialog,
k without rows, the checkbox's row, one search per Enter, focus after "more", the shortcuts
toggle after an in-place load, and forms submitted once."""

import importlib

import pytest
from playwright.sync_api import expect

from dedup import services as write
from palace.models import AuditEntry, DrawerLink
from review import services
from review.selectors import queue as queue_selectors
from review.services import ItemRef
from tests.browser.test_keys import PORT, link_between, log_in, palace  # noqa: F401 - fixture
from tests.review.clusters_data import five_drawers

# The module, not the view of the same name that review.views exports.
audit_views = importlib.import_module("review.views.audit")
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def port_link() -> DrawerLink:
    return link_between(PORT, PORT.replace("8080", "8081"))


def test_keys_do_nothing_behind_the_keys_dialog(page, live_server, palace):  # noqa: F811
    link = port_link()
    log_in(page, live_server, f"/items/d{link.pk}/")
    page.keyboard.press("?")
    expect(page.locator("dialog#keys")).to_be_visible()
    page.keyboard.press("2")
    page.keyboard.press("x")
    page.wait_for_timeout(500)
    assert not AuditEntry.objects.exists()


def test_keys_dialog_keeps_the_canonical_choice(page, live_server, palace):  # noqa: F811
    log_in(page, live_server, f"/items/d{port_link().pk}/")
    page.keyboard.press("?")
    page.keyboard.press("2")
    expect(page.locator('.decide input[data-key-canonical="2"]')).not_to_be_checked()


def test_k_on_an_item_page_opens_its_queue(page, live_server, palace):  # noqa: F811
    log_in(page, live_server, "/")
    page.goto(f"{live_server.url}/items/d{port_link().pk}/?type=drawer")
    page.wait_for_load_state()
    page.keyboard.press("k")
    page.wait_for_url(f"{live_server.url}/?type=drawer")
    assert page.url == f"{live_server.url}/?type=drawer"


def test_k_on_a_page_without_rows_stays_there(page, live_server, palace):  # noqa: F811
    log_in(page, live_server, "/")
    audit = f"{live_server.url}/audit/"
    page.goto(audit)
    page.wait_for_load_state()
    page.keyboard.press("k")
    page.wait_for_timeout(300)
    assert page.url == audit


def test_enter_opens_the_row_whose_checkbox_was_clicked(page, live_server, palace):  # noqa: F811
    log_in(page, live_server, "/")
    page.keyboard.press("j")  # selects the first row
    third = page.locator("tr.row").nth(2)
    href = third.get_attribute("data-href")
    third.locator('input[type="checkbox"]').click()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**{href}")
    assert page.url.endswith(href)


def test_enter_in_the_search_box_asks_once(page, live_server, palace):  # noqa: F811
    log_in(page, live_server, "/")
    asked = []
    page.on("request", lambda r: asked.append(r.url) if "q=port" in r.url else None)
    page.get_by_label("Search").fill("port")
    page.get_by_label("Search").press("Enter")
    page.wait_for_timeout(800)
    assert len(asked) == 1


def test_next_page_focuses_the_first_new_row(page, live_server, palace, monkeypatch):  # noqa: F811
    monkeypatch.setitem(queue_selectors.queue_page.__kwdefaults__, "size", 2)
    log_in(page, live_server, "/")
    page.get_by_role("link", name="Next page").click()
    first = page.locator("tr.row").first.locator("a").first
    expect(first).to_be_focused()


def test_older_entries_focus_the_first_new_row(page, live_server, palace, monkeypatch):  # noqa: F811
    monkeypatch.setattr(audit_views, "AUDIT_PAGE", 1)
    for link in DrawerLink.objects.all()[:2]:
        services.decide(item=ItemRef.of(link), action="dismiss", actor=palace)
    log_in(page, live_server, "/audit/")
    page.get_by_role("link", name="Older entries").click()
    expect(page.locator("#audit-rows tr")).to_have_count(2)
    page.wait_for_timeout(200)
    oldest = AuditEntry.objects.order_by("pk").first()
    focused_row = page.evaluate("() => document.activeElement.closest('tr')?.id")
    assert focused_row == f"decision-{oldest.pk}"


def test_the_shortcuts_toggle_returns_to_the_item_loaded_in_place(
    page,
    live_server,
    palace,  # noqa: F811
):
    log_in(page, live_server, f"/items/d{port_link().pk}/")
    first = page.url
    page.keyboard.press("x")
    expect(page).not_to_have_url(first)
    now = page.url
    page.locator("header").get_by_role("button", name="Turn single-key shortcuts off").click()
    page.wait_for_load_state()
    assert page.url == now


def test_a_plain_form_is_submitted_once(page, live_server, palace):  # noqa: F811
    log_in(page, live_server, "/")
    posted = []
    page.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)
    page.locator('tr.row input[type="checkbox"]').first.check()
    page.evaluate(
        """() => {
          const apply = document.querySelector('#bulk button[type=submit]:not([hidden])');
          apply.click();
          setTimeout(() => apply.click(), 30);
        }"""
    )
    page.wait_for_load_state()
    page.wait_for_timeout(800)
    assert len(posted) == 1


# --- phone width (375 px): long words wrap, the cluster's text stays readable -------------------

LONG = "A very long token: " + "a" * 240 + "{} ends here today."


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport={"width": 375, "height": 667})
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


def page_width(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth")


def test_a_long_word_in_the_canonical_choice_fits_a_phone(phone, live_server, curator):
    room = write.room_get_or_create(wing="ops", room="dev")
    write.drawer_write(room=room, content=LONG.format(1))
    (link,) = write.drawer_write(room=room, content=LONG.format(2)).links
    log_in(phone, live_server, f"/items/d{link.pk}/")
    assert page_width(phone) <= 375


def test_the_bulk_confirmation_filter_fits_a_phone(phone, live_server, palace):  # noqa: F811
    long_filter = "/?type=drawer&wing=ops&room=dev&order=similarity&status=open&rule=near"
    log_in(phone, live_server, long_filter)
    phone.get_by_label("every item of this filter").check()
    phone.get_by_role("button", name="Apply").click()
    expect(phone.locator("code")).to_be_visible()
    assert page_width(phone) <= 375


def test_a_clusters_text_column_stays_readable_on_a_phone(phone, live_server, curator):
    five_drawers()
    first = DrawerLink.objects.order_by("pk").first()
    log_in(phone, live_server, f"/clusters/d{first.pk}/")
    width = (
        phone.locator(".members td.text").nth(1).evaluate("e => e.getBoundingClientRect().width")
    )
    assert width >= 200


def test_the_keys_dialog_names_the_proposals_keys_and_escape(page, live_server, palace):  # noqa: F811
    """A curator's trial: the list left out what m and d do on a sweep's proposal, and Escape."""
    log_in(page, live_server, f"/items/d{port_link().pk}/")
    page.keyboard.press("?")
    keys = page.locator("dialog#keys")
    expect(keys).to_contain_text("on a sweep's proposal, the same")
    expect(keys).to_contain_text("on a sweep's proposal, not the same")
    expect(keys).to_contain_text("close this list")
    page.keyboard.press("Escape")
    expect(keys).not_to_be_visible()
