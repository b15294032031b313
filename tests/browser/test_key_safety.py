"""A key decides at most the item the curator sees, and `u` undoes only what the Undo offer on
the page names, once (the tester: holding `d` deleted ~10 links; `x x` dismissed an item seen for
50 ms; `u u` reverted two decisions; `u` on the audit log kept going back in the history)."""

import re

import pytest
from playwright.sync_api import expect

from palace.models import AuditEntry
from tests.browser.test_keys import BACKUP, PORT, link_between, log_in, palace  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FILTER = "?type=drawer&order=oldest"


def decisions(action: str) -> int:
    return AuditEntry.objects.filter(action=f"review.{action}").count()


def test_a_held_key_decides_one_item(page, live_server, palace):  # noqa: F811
    link = link_between(PORT, PORT.replace("8080", "8081"))
    log_in(page, live_server, f"/items/d{link.pk}/{FILTER}")
    page.keyboard.down("d")
    for _ in range(6):  # the key held: the browser repeats it (`repeat` set)
        page.wait_for_timeout(100)
        page.keyboard.down("d")
    page.keyboard.up("d")
    expect(page.get_by_text(re.compile("Done: delete link"))).to_be_visible()
    page.wait_for_timeout(500)
    assert decisions("delete_link") == 1


def test_a_quick_second_press_never_decides_the_item_swapped_in(page, live_server, palace):  # noqa: F811
    link = link_between(PORT, PORT.replace("8080", "8081"))
    log_in(page, live_server, f"/items/d{link.pk}/{FILTER}")
    # The second press comes the moment the next item is swapped in, from the page itself: sent
    # from here once the item was seen, it came after the console's 450 ms pause on a CI machine
    # under load, and decided.
    page.evaluate("""() => document.addEventListener("htmx:afterSwap", function again(event) {
        if (event.detail.target.id !== "main") return;
        document.removeEventListener("htmx:afterSwap", again);
        document.body.dispatchEvent(new KeyboardEvent("keydown", {key: "x", bubbles: true}));
    })""")
    page.keyboard.press("x")
    expect(page.get_by_text(re.compile(f"Done: dismiss on d{link.pk}"))).to_be_visible()
    page.wait_for_timeout(600)
    assert decisions("dismiss") == 1
    page.keyboard.press("x")  # once it has been seen, its keys work
    expect(page.get_by_text(re.compile(rf"Done: dismiss on d(?!{link.pk}\b)"))).to_be_visible()
    assert decisions("dismiss") == 2


def test_a_double_click_decides_one_item(page, live_server, palace):  # noqa: F811
    link = link_between(PORT, PORT.replace("8080", "8081"))
    log_in(page, live_server, f"/items/d{link.pk}/{FILTER}")
    page.get_by_role("button", name=re.compile("Dismiss")).dblclick()
    expect(page.get_by_text(re.compile("Done: dismiss"))).to_be_visible()
    page.wait_for_timeout(600)
    assert decisions("dismiss") == 1


def test_u_undoes_the_offered_decision_once(page, live_server, palace):  # noqa: F811
    link = link_between(PORT, PORT.replace("8080", "8081"))
    log_in(page, live_server, f"/items/d{link.pk}/{FILTER}")
    page.keyboard.press("x")
    expect(page.get_by_text(re.compile("Done: dismiss"))).to_be_visible()
    page.wait_for_timeout(500)
    page.keyboard.press("x")
    undo_second = re.compile(rf"^Undo dismiss on d(?!{link.pk}\b)")
    expect(page.get_by_role("button", name=undo_second)).to_be_visible()
    second = AuditEntry.objects.latest("pk")
    page.keyboard.press("u")
    page.keyboard.press("u")  # before the next page arrives
    expect(page.get_by_text(re.compile("Reverted decision"))).to_be_visible()
    page.keyboard.press("u")  # no offer on this page: nothing
    page.wait_for_timeout(500)
    (revert,) = AuditEntry.objects.filter(action="review.revert")
    assert revert.data["reverts"] == second.pk


def test_u_does_nothing_where_no_undo_is_offered(page, live_server, palace):  # noqa: F811
    link = link_between(BACKUP, BACKUP.upper())
    log_in(page, live_server, f"/items/d{link.pk}/")
    page.keyboard.press("x")
    expect(page.get_by_text(re.compile("Done: dismiss"))).to_be_visible()
    page.get_by_role("link", name="Audit log", exact=True).click()
    expect(page.get_by_role("heading", name=re.compile("Audit"))).to_be_visible()
    page.keyboard.press("u")
    page.wait_for_timeout(500)
    assert decisions("revert") == 0
