"""Issue 13, defects 1-5, in a real browser: keys in text fields, a session that ends mid-work,
a visible undo (also of a batch), a confirmation for wide actions, and the Back button."""

import re

import pytest
from playwright.sync_api import expect

from dedup import services as write
from dedup.services import DedupConfig
from palace.models import AuditEntry, DrawerLink, EntityLink
from review.models import SweepRun
from review.services import sweeps as sweep_services
from tests.review.test_sweep_jobs import work
from tests.review.test_sweep_pages import DATABASE_TASKS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PORT = "For local development always use port 8080 for the API server."
BACKUP = "Backups run nightly at two in the morning and are kept for thirty days."
LUNCH = "Katarina wants code reviews before lunch, never on Friday afternoons."
NOTE = "these are NOT the same"


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


def log_in(page, live_server, path="/"):
    page.goto(f"{live_server.url}{path}")
    fill_login(page)


def fill_login(page):
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    page.get_by_label("Username").fill("cora")
    page.get_by_label("Password").fill("secret-pass-1")
    page.get_by_role("button", name="Log in").click()
    # The page logged into, loaded whole (its deferred keyboard script has run): Playwright's
    # wait for the load state could answer for the login page still there, and a key pressed
    # before the script ran did nothing.
    expect(page).not_to_have_url(re.compile(r"/accounts/login/"))
    page.wait_for_function("document.readyState === 'complete'")


def link_between(a: str, b: str) -> DrawerLink:
    return DrawerLink.objects.get(older__content=a, newer__content=b)


# --- 1. Enter and single keys in a text field never decide ------------------------------------


def test_enter_in_the_note_field_never_decides(page, live_server, palace):
    link = link_between(PORT, PORT.replace("8080", "8081"))
    log_in(page, live_server, f"/items/d{link.pk}/")
    note = page.get_by_label("Note")
    note.fill(NOTE)
    note.press("Enter")
    note.press("m")  # a shortcut key, typed into the field
    expect(note).to_have_value(NOTE + "m")
    page.get_by_role("button", name=re.compile("Dismiss")).click()
    expect(page.get_by_text(re.compile("Done: dismiss"))).to_be_visible()
    (entry,) = AuditEntry.objects.all()
    assert entry.action == "review.dismiss"
    assert entry.data["note"] == NOTE + "m"


def test_enter_in_the_note_field_never_decides_without_javascript(browser, live_server, palace):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    link = link_between(BACKUP, BACKUP.upper())
    log_in(page, live_server, f"/items/d{link.pk}/")
    page.get_by_label("Note").fill(NOTE)
    page.get_by_label("Note").press("Enter")
    page.get_by_role("button", name=re.compile("Dismiss")).click()
    expect(page.get_by_text(re.compile("Done: dismiss"))).to_be_visible()
    context.close()
    (entry,) = AuditEntry.objects.all()
    assert entry.action == "review.dismiss"


def test_enter_in_the_bulk_note_decides_nothing(page, live_server, palace):
    log_in(page, live_server)
    page.locator("table.queue tbody tr.row input[type=checkbox]").first.check()
    bulk_note = page.locator("#bulk").get_by_label("Note")
    bulk_note.fill(NOTE)
    bulk_note.press("Enter")
    page.get_by_label("Type").select_option("entity")  # a round trip after the Enter
    expect(page.locator("table.queue tbody tr.row")).to_have_count(1)
    assert not AuditEntry.objects.exists()


# --- 2. A session that ends mid-work ------------------------------------------------------------


def test_a_session_ended_in_another_tab_returns_to_the_item(page, live_server, palace):
    link = link_between(PORT, PORT.replace("8080", "8081"))
    item_url = f"{live_server.url}/items/d{link.pk}/"
    log_in(page, live_server, f"/items/d{link.pk}/")
    expect(page).to_have_url(item_url)
    other_tab = page.context.new_page()
    other_tab.goto(f"{live_server.url}/")
    other_tab.get_by_role("button", name="Log out").click()
    expect(other_tab).to_have_url(re.compile(r"/accounts/login/"))
    page.keyboard.press("m")
    fill_login(page)  # a whole login page, not a form nested in the item
    expect(page).to_have_url(item_url)
    expect(page.get_by_text(re.compile("was not made"))).to_be_visible()
    expect(page.get_by_role("button", name=re.compile("Merge"))).to_be_visible()
    link.refresh_from_db()
    assert link.status == "open"
    assert not AuditEntry.objects.exists()
    page.keyboard.press("m")
    expect(page.get_by_text(re.compile("Done: merge"))).to_be_visible()


def test_a_login_again_in_another_tab_reloads_the_item(page, live_server, palace):
    link = link_between(PORT, PORT.replace("8080", "8081"))
    item_url = f"{live_server.url}/items/d{link.pk}/"
    log_in(page, live_server, f"/items/d{link.pk}/")
    other_tab = page.context.new_page()
    other_tab.goto(f"{live_server.url}/")
    other_tab.get_by_role("button", name="Log out").click()
    fill_login(other_tab)  # a new session, and a new CSRF token the item page does not hold
    page.keyboard.press("m")
    expect(page.get_by_text(re.compile("was not made"))).to_be_visible()
    expect(page).to_have_url(item_url)
    assert not AuditEntry.objects.exists()
    page.keyboard.press("m")
    expect(page.get_by_text(re.compile("Done: merge"))).to_be_visible()


# --- 3. A visible undo, also of a whole batch ---------------------------------------------------


def test_a_visible_undo_button_after_a_decision(page, live_server, palace):
    link = link_between(PORT, PORT.replace("8080", "8081"))
    log_in(page, live_server, f"/items/d{link.pk}/")
    page.get_by_role("button", name=re.compile("Delete link")).click()
    expect(page.get_by_text(re.compile("Done: delete link"))).to_be_visible()
    assert not DrawerLink.objects.filter(pk=link.pk).exists()
    page.get_by_role("button", name=re.compile("^Undo")).click()
    expect(page).to_have_url(re.compile(rf"/items/d{link.pk}/"))
    expect(page.get_by_text(re.compile("Reverted decision"))).to_be_visible()
    assert DrawerLink.objects.get(pk=link.pk).status == "open"


def test_undo_a_bulk_decision_as_one_batch(page, live_server, palace):
    log_in(page, live_server)
    boxes = page.locator("table.queue tbody tr.row input[type=checkbox]")
    boxes.nth(0).check()
    boxes.nth(1).check()
    boxes.nth(2).check()
    page.locator("#bulk").get_by_role("button", name="Apply").click()
    expect(page.get_by_text(re.compile("3 items decided"))).to_be_visible()
    page.get_by_role("button", name=re.compile("Undo all 3")).click()
    expect(page.get_by_text(re.compile("Reverted 3 decisions"))).to_be_visible()
    assert AuditEntry.objects.filter(action="review.revert").count() == 3

    boxes.nth(0).check()
    boxes.nth(1).check()
    page.locator("#bulk").get_by_role("button", name="Apply").click()
    expect(page.get_by_text(re.compile("2 items decided"))).to_be_visible()
    page.keyboard.press("u")  # the whole batch, not one item of it
    expect(page.get_by_text(re.compile("Reverted 2 decisions"))).to_be_visible()
    assert DrawerLink.objects.filter(status="open").count() == 3
    assert EntityLink.objects.get().status == "open"


def test_revert_a_batch_from_the_audit_log(page, live_server, palace):
    log_in(page, live_server)
    boxes = page.locator("table.queue tbody tr.row input[type=checkbox]")
    boxes.nth(0).check()
    boxes.nth(1).check()
    page.locator("#bulk").get_by_role("button", name="Apply").click()
    expect(page.get_by_text(re.compile("2 items decided"))).to_be_visible()
    page.get_by_role("link", name="Audit log").click()
    page.get_by_role("button", name=re.compile("Revert batch")).first.click()
    expect(page.get_by_text(re.compile("Reverted 2 decisions"))).to_be_visible()
    assert AuditEntry.objects.filter(action="review.revert").count() == 2


# --- 4. Wide actions show their reach and are confirmed ----------------------------------------


def test_every_item_of_a_filter_is_confirmed_first(page, live_server, palace):
    log_in(page, live_server)
    page.get_by_label(re.compile("every item of this filter")).check()
    page.locator("#bulk").get_by_role("button", name="Apply").click()
    expect(page.get_by_role("heading", name=re.compile("Dismiss 4 items"))).to_be_visible()
    expect(page.get_by_text(re.compile("3 drawer links"))).to_be_visible()
    assert not AuditEntry.objects.exists()
    page.get_by_role("button", name=re.compile("Dismiss 4 items")).click()
    expect(page.get_by_text(re.compile("4 items decided"))).to_be_visible()
    assert AuditEntry.objects.filter(action="review.dismiss").count() == 4


def test_sweep_apply_and_reverse_are_confirmed_first(page, live_server, palace, settings):
    """Confirmed, then queued for a worker: the page says "Applying…" and follows the job by
    polling until the worker (here `db_worker` in the test's thread) is done, then shows it."""
    settings.TASKS = DATABASE_TASKS  # queued until the worker runs, as in production
    off = DedupConfig(enabled=False, near_threshold=0.9, entity_fuzzy=False)
    room = write.room_get_or_create(wing="legacy", room="notes")
    for content in (LUNCH, LUNCH, BACKUP, BACKUP.upper()):
        write.drawer_write(room=room, content=content, mode=write.WriteMode.MINED, config=off)
    run = sweep_services.execute(sweep_services.start(wing="legacy", threshold=0.9))
    assert run.status == SweepRun.Status.DONE
    log_in(page, live_server, f"/sweeps/{run.pk}/")
    page.get_by_role("button", name="Apply", exact=True).click()
    expect(page.get_by_role("heading", name=re.compile("Apply sweep"))).to_be_visible()
    expect(page.locator(".reach")).to_contain_text("2 merged")
    assert not run.proposals.exclude(status="proposed").exists()
    page.get_by_role("button", name=re.compile("Apply sweep")).click()
    expect(page.get_by_text("Applying…")).to_be_visible()
    expect(page.get_by_role("button", name=re.compile("Reverse everything"))).to_have_count(0)
    assert not run.proposals.exclude(status="proposed").exists()
    work()
    expect(page.get_by_text(re.compile("Applied:"))).to_be_visible(timeout=10_000)  # the poll
    assert run.proposals.filter(status="merged").count() == 2

    page.get_by_role("button", name=re.compile("Reverse everything")).click()
    expect(page.get_by_role("heading", name=re.compile("Reverse sweep"))).to_be_visible()
    expect(page.locator(".reach")).to_contain_text("2 merges reverted")
    assert run.proposals.filter(status="merged").count() == 2
    page.get_by_role("button", name=re.compile("Reverse sweep")).click()
    expect(page.get_by_text("Reversing…")).to_be_visible()
    work()
    expect(page.get_by_text(re.compile("Reversed:"))).to_be_visible(timeout=10_000)
    assert not run.proposals.filter(status="merged").exists()


# --- 5. The Back button -------------------------------------------------------------------------


def test_back_keeps_the_filter_form_and_the_url_in_sync(page, live_server, palace):
    log_in(page, live_server)
    page.get_by_label("Order").select_option("oldest")
    expect(page).to_have_url(re.compile(r"order=oldest"))
    page.get_by_label("Type").select_option("entity")
    expect(page).to_have_url(re.compile(r"type=entity"))
    page.go_back()
    expect(page).not_to_have_url(re.compile(r"type=entity"))
    expect(page.get_by_label("Type")).to_have_value("")
    expect(page.get_by_label("Order")).to_have_value("oldest")
    page.get_by_label("Type").select_option("drawer")  # the next change keeps the order
    expect(page).to_have_url(re.compile(r"type=drawer"))
    expect(page).to_have_url(re.compile(r"order=oldest"))


def test_back_to_a_decided_item_shows_no_live_buttons(page, live_server, palace):
    link = link_between(PORT, PORT.replace("8080", "8081"))
    item_url = f"{live_server.url}/items/d{link.pk}/"
    log_in(page, live_server, f"/items/d{link.pk}/")
    page.keyboard.press("x")
    expect(page.get_by_text(re.compile("Done: dismiss"))).to_be_visible()
    expect(page).not_to_have_url(item_url)
    page.go_back()
    expect(page).to_have_url(item_url)
    expect(page.get_by_text(re.compile("Decided: dismissed"))).to_be_visible()
    expect(page.locator("form.decide")).to_have_count(0)
    page.get_by_role("link", name="Audit log", exact=True).click()  # a full page, then Back
    page.go_back()
    expect(page.get_by_text(re.compile("Decided: dismissed"))).to_be_visible()
    expect(page.locator("form.decide")).to_have_count(0)
