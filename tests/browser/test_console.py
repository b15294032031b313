"""A curator's session in a real browser, each effect checked in the page and in the database."""

import re

import pytest
from playwright.sync_api import expect

from dedup import services as write
from palace.models import AuditEntry, Drawer, DrawerLink, Entity, EntityLink

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PORT = "For local development always use port 8080 for the API server."
BACKUP = "Backups run nightly at two in the morning and are kept for thirty days."
LUNCH = "Katarina wants code reviews before lunch, never on Friday afternoons."


@pytest.fixture
def palace(dedup_settings, curator):
    ops = write.room_get_or_create(wing="ops", room="dev")
    people = write.room_get_or_create(wing="people", room="preferences")
    write.drawer_write(room=ops, content=PORT)
    write.drawer_write(room=ops, content=PORT.replace("8080", "8081"))
    write.drawer_write(room=ops, content=BACKUP)
    write.drawer_write(room=ops, content=BACKUP.upper())
    write.drawer_write(room=people, content=LUNCH)
    write.drawer_write(room=people, content=LUNCH.replace("lunch", "lucnh"))
    write.entity_resolve(name="Katarina", kind="person")
    write.entity_resolve(name="Katerino", kind="person")
    return curator


def log_in(page, live_server):
    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    page.get_by_label("Username").fill("cora")
    page.get_by_label("Password").fill("secret-pass-1")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Review queue")).to_be_visible()


def link_between(a: str, b: str) -> DrawerLink:
    return DrawerLink.objects.get(older__content=a, newer__content=b)


def test_log_in_filter_and_see_both_kinds(page, live_server, palace, screenshot):
    log_in(page, live_server)
    rows = page.locator("table.queue tbody tr.row")
    expect(rows).to_have_count(4)
    screenshot("queue")
    page.get_by_label("Type").select_option("entity")  # htmx swaps the results in place
    expect(rows).to_have_count(1)
    expect(page).to_have_url(re.compile(r"type=entity"))
    expect(rows.first).to_contain_text("Katarina")
    page.get_by_label("Type").select_option("")
    page.get_by_label("Search").fill("port")
    page.get_by_label("Search").press("Enter")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("8081")


def test_add_alias_with_the_keyboard(page, live_server, palace, screenshot):
    log_in(page, live_server)
    link = EntityLink.objects.get()
    page.goto(f"{live_server.url}/items/e{link.pk}/")
    expect(page.get_by_role("heading", name=re.compile("possibly_same_as"))).to_be_visible()
    screenshot("item-entity-pair")
    page.keyboard.press("?")
    expect(page.get_by_role("heading", name="Keyboard")).to_be_visible()
    page.keyboard.press("Escape")
    page.keyboard.press("a")
    expect(page.get_by_text(re.compile("Done: add alias"))).to_be_visible()
    link.refresh_from_db()
    assert link.status == "aliased"
    katarina = Entity.objects.get(name="Katarina")
    assert list(katarina.alias_set.values_list("alias", flat=True)) == ["Katerino"]
    assert Entity.objects.get(name="Katerino").redirect_to == katarina


def test_merge_two_drawers(page, live_server, palace, screenshot):
    log_in(page, live_server)
    link = link_between(PORT, PORT.replace("8080", "8081"))
    page.goto(f"{live_server.url}/items/d{link.pk}/")
    expect(page.get_by_role("alert")).to_contain_text("differ in a number or a date")
    screenshot("item-drawer-pair")
    page.get_by_role("button", name=re.compile("Merge")).click()
    expect(page.get_by_text(re.compile("Done: merge"))).to_be_visible()
    newer = Drawer.objects.get(content=PORT.replace("8080", "8081"))
    assert newer.superseded_by.content == PORT
    assert newer.valid_to is not None
    assert Drawer.objects.get(content=PORT).consolidation["restatements"] == 1


def test_delete_a_link_then_revert_it_from_the_audit_log(page, live_server, palace, screenshot):
    log_in(page, live_server)
    link = link_between(BACKUP, BACKUP.upper())
    page.goto(f"{live_server.url}/items/d{link.pk}/")
    page.keyboard.press("d")
    expect(page.get_by_text(re.compile("Done: delete link"))).to_be_visible()
    assert not DrawerLink.objects.filter(pk=link.pk).exists()

    page.get_by_role("link", name="Audit log").click()
    row = page.locator(f"#decision-{AuditEntry.objects.get().pk}")
    expect(row).to_contain_text("review.delete_link")
    screenshot("audit-log")
    row.get_by_role("button", name=re.compile("Revert")).click()
    expect(page.get_by_text(re.compile("Reverted decision"))).to_be_visible()
    expect(row).to_contain_text("reverted")
    restored = DrawerLink.objects.get(pk=link.pk)
    assert restored.status == "open"
    assert restored.verdict == "normalized"


def test_phone_width_queue_is_usable(page, live_server, palace):
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, live_server)
    first = page.locator("table.queue tbody tr.row").first
    expect(first).to_be_visible()
    box = first.bounding_box()
    assert box["width"] <= 390


def test_keyboard_moves_through_the_queue(page, live_server, palace):
    log_in(page, live_server)
    rows = page.locator("table.queue tbody tr.row")
    page.keyboard.press("j")
    expect(rows.nth(0)).to_have_class(re.compile("selected"))
    page.keyboard.press("j")
    expect(rows.nth(1)).to_have_class(re.compile("selected"))
    second = rows.nth(1).get_attribute("data-href")
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{live_server.url}{second}")
    page.keyboard.press("j")  # on an item: the next one in the queue
    expect(page).not_to_have_url(f"{live_server.url}{second}")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
