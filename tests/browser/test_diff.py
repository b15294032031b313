"""Issue 13, capabilities 12 and 15 in a real browser: the queue rows show the changed words,
inserted words are marked by more than colour, and an item's decision buttons are on screen at
1440x900 without scrolling."""

import re

import pytest
from playwright.sync_api import expect

from dedup import services as write
from palace.models import DrawerLink, EntityLink

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PORT = "For local development always use port 8080 for the API server, says the platform team."
# A long fact: an item page must keep its buttons on screen however long the texts.
LONG = " ".join(
    [
        "The nightly backup of the production database runs at two in the morning on Tuesday,",
        "is copied to the second region, checked by restoring it into a scratch instance,",
        "and kept for thirty days; the monthly one is kept for a year by the platform team.",
    ]
)


@pytest.fixture
def palace(dedup_settings, curator):
    ops = write.room_get_or_create(wing="ops", room="dev")
    write.drawer_write(room=ops, content=PORT)
    write.drawer_write(room=ops, content=PORT.replace("8080", "8081"))
    write.drawer_write(room=ops, content=LONG)
    write.drawer_write(room=ops, content=LONG.replace("Tuesday", "Thursday"))
    write.entity_resolve(name="Katarina", kind="person")
    write.entity_resolve(name="Katerino", kind="person")
    return curator


def log_in(page, live_server):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("cora")
    page.get_by_label("Password").fill("secret-pass-1")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Review queue")).to_be_visible()


def row_of(page, link) -> object:
    return page.locator("table.queue tr.row", has=page.locator(f'a[href^="/items/d{link.pk}/"]'))


def test_queue_row_shows_the_changed_words_with_context(page, live_server, palace):
    log_in(page, live_server)
    row = row_of(page, DrawerLink.objects.get(newer__content__contains="8081"))
    expect(row.locator("del")).to_have_text(re.compile(r"8080$"))
    expect(row.locator("ins")).to_have_text(re.compile(r"8081$"))
    expect(row).to_contain_text("always use port")
    expect(row).not_to_contain_text("For local development")


def test_inserted_words_are_underlined_and_deleted_words_struck_through(page, live_server, palace):
    log_in(page, live_server)
    row = row_of(page, DrawerLink.objects.get(newer__content__contains="8081"))
    inserted = row.locator("ins").evaluate("e => getComputedStyle(e).textDecorationLine")
    deleted = row.locator("del").evaluate("e => getComputedStyle(e).textDecorationLine")
    assert inserted == "underline"
    assert deleted == "line-through"


def test_a_differing_weekday_is_outlined_in_the_queue_row(page, live_server, palace):
    log_in(page, live_server)
    row = row_of(page, DrawerLink.objects.get(newer__content__contains="Thursday"))
    flagged = row.locator("ins.flagged")
    expect(flagged).to_have_attribute("title", "weekday differs")
    assert flagged.evaluate("e => getComputedStyle(e).outlineStyle") == "solid"


def buttons_bottom(page) -> float:
    buttons = page.locator(".decide .actions button")
    expect(buttons.first).to_be_visible()
    return max(box["y"] + box["height"] for box in (b.bounding_box() for b in buttons.all()))


@pytest.mark.parametrize("which", ["drawer link", "long drawer link", "entity pair"])
def test_diff_and_decide_buttons_are_above_the_fold_at_1440x900(page, live_server, palace, which):
    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, live_server)
    if which == "entity pair":
        url = f"/items/e{EntityLink.objects.get().pk}/"
    else:
        word = "Thursday" if which.startswith("long") else "8081"
        url = f"/items/d{DrawerLink.objects.get(newer__content__contains=word).pk}/"
    page.goto(f"{live_server.url}{url}")
    assert page.evaluate("window.scrollY") == 0
    assert buttons_bottom(page) <= 900
    if which != "entity pair":
        diff = page.locator(".pair .content").last.bounding_box()
        assert diff["y"] + diff["height"] <= 900
