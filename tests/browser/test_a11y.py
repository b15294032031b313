"""Accessibility, phone width and two curators at once (issue 13, capabilities 13 and 14), in a
real Chromium: axe-core (the npm package `make install` installs) on every console page at
1440x900 and 390x844, no horizontal overflow at 390 px, focus, title and live region after an
in-place load, single-key shortcuts turned off, and item holds seen from two browser contexts."""

import os
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, Permission
from playwright.sync_api import expect

from dedup import services as write
from dedup.services import DedupConfig
from palace.models import AuditEntry, DrawerLink, EntityLink
from review import services as decisions
from review.forms import QueueFilterForm
from review.selectors import queue_page
from review.services import sweeps as sweep_services
from tests.review.clusters_data import five_drawers

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
SIZES = {"desktop": (1440, 900), "phone": (390, 844)}
PASSWORD = "secret-pass-1"
PORT = "For local development always use port 8080 for the API server."
BACKUP = "Backups run nightly at two in the morning and are kept for thirty days."
LUNCH = "Katarina wants code reviews before lunch, never on Friday afternoons."
STAGING = "The staging database is refreshed from an anonymised production dump every Monday."
TOKENS = "Rotate the API tokens of departed agents within one working day."
OFF = DedupConfig(enabled=False, near_threshold=0.9, entity_fuzzy=False)


def curator(django_user_model, name: str):
    user = django_user_model.objects.create_user(name, password=PASSWORD)
    group, _ = Group.objects.get_or_create(name="curators")
    group.permissions.add(Permission.objects.get(codename="decide"))
    user.groups.add(group)
    return user


@pytest.fixture
def palace(dedup_settings, django_user_model):
    """Every kind of item (drawer link, entity pair, a sweep's proposal), a finished sweep applied
    and reversed, and two decisions the second of which depends on the first (so a revert asks to confirm)."""
    ops = write.room_get_or_create(wing="ops", room="dev")
    people = write.room_get_or_create(wing="people", room="preferences")
    for room, text, variant in (
        (ops, PORT, PORT.replace("8080", "8081")),
        (ops, BACKUP, BACKUP.upper()),
        (people, LUNCH, LUNCH.replace("lunch", "lucnh")),
        (ops, TOKENS, TOKENS.replace("departed", "departing")),
    ):
        write.drawer_write(room=room, content=text)
        write.drawer_write(room=room, content=variant)
    write.entity_resolve(name="Katarina", kind="person")
    write.entity_resolve(name="Katerino", kind="person")
    legacy = write.room_get_or_create(wing="ops", room="runbooks")
    for text in (STAGING, STAGING.replace("refreshed", "refershed")):
        write.drawer_write(room=legacy, content=text, mode=write.WriteMode.MINED, config=OFF)
    run = sweep_services.execute(sweep_services.start(wing="ops", room="runbooks", threshold=0.9))
    cora = curator(django_user_model, "cora")
    curator(django_user_model, "otto")
    # The sweep's page shows an application reversed since (its own style, checked too).
    sweep_services.apply(run, threshold=0.9, actor=cora)
    sweep_services.reverse(run, actor=cora)
    first = DrawerLink.objects.get(older__content=PORT)
    merged = decisions.decide(item=f"d{first.pk}", action="merge", actor=cora)
    third = write.drawer_write(room=ops, content=PORT.replace("8080", "8082"))
    later = next(link for link in third.links if link.older_id == first.older_id)
    decisions.decide(item=f"d{later.pk}", action="merge", actor=cora)
    restatements = [drawer.pk for drawer in five_drawers()]  # a cluster of five
    cluster = DrawerLink.objects.filter(newer__in=restatements, status="open").order_by("pk")[0]
    return {"run": run, "merged": merged, "cluster": f"d{cluster.pk}"}


@pytest.fixture
def new_page(browser):
    """Pages in browser contexts of their own (two curators: two contexts), closed after."""
    contexts = []

    def open_page(size: str = "desktop"):
        width, height = SIZES[size]
        contexts.append(browser.new_context(viewport={"width": width, "height": height}))
        page = contexts[-1].new_page()
        page.set_default_timeout(10_000)
        return page

    yield open_page
    for context in contexts:
        context.close()


def log_in(page, live_server, name: str = "cora") -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(name)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Review queue")).to_be_visible()


def open_items() -> dict[str, str]:
    """One open item of each kind, by kind."""
    return {
        "drawer pair": f"d{DrawerLink.objects.filter(status='open').order_by('pk').first().pk}",
        "entity pair": f"e{EntityLink.objects.get(status='open').pk}",
        "proposal": f"p{sweep_services.Proposal.objects.order_by('pk').first().pk}",
    }


def every_page(page, live_server, palace):
    """Visit every console page, yielding its name once it is loaded."""
    page.goto(f"{live_server.url}/accounts/login/")
    yield "login"
    log_in(page, live_server)
    yield "queue"
    run = palace["run"].pk
    for name, url in (
        ("queue of a sweep's proposals", f"/?run={run}"),
        *((f"item: {kind}", f"/items/{item}/") for kind, item in open_items().items()),
        ("audit log", "/audit/"),
        ("stats", "/stats/"),
        ("sweeps", "/sweeps/"),
        ("sweep", f"/sweeps/{run}/"),
        ("clusters", "/?type=cluster"),
        ("cluster", f"/clusters/{palace['cluster']}/"),
        ("a page refused at the edge (a NUL in its query)", "/?q=%00"),
    ):
        page.goto(live_server.url + url)
        yield name
    page.goto(f"{live_server.url}/audit/")
    page.locator(f"#decision-{palace['merged'].pk}").get_by_role("button").click()
    expect(page.get_by_role("heading", name=re.compile("Revert decision"))).to_be_visible()
    yield "revert confirm"
    page.goto(f"{live_server.url}/items/{open_items()['drawer pair']}/")
    page.get_by_role("button", name=re.compile("Dismiss")).click()  # the next item, in place
    expect(page.locator(".messages")).to_contain_text("Done: dismiss")
    yield "next item after a decision, with its flash message"


def axe_violations(page) -> list[str]:
    """Serious and critical violations, target size (WCAG 2.2, off by default) included."""
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("() => axe.run(document, {rules: {'target-size': {enabled: true}}})")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:4]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


@pytest.fixture
def axe():
    if not AXE.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{AXE} is missing: `make install` runs `npm ci`.")
        pytest.skip("axe-core is not installed: run `make install` (npm ci).")
    return AXE


@pytest.mark.parametrize("size", SIZES)
def test_no_serious_or_critical_axe_violation_on_any_page(new_page, live_server, palace, axe, size):
    page = new_page(size)
    found = [
        f"{name} at {size}: {violation}"
        for name in every_page(page, live_server, palace)
        for violation in axe_violations(page)
    ]
    assert found == [], "\n".join(found)


def test_no_page_overflows_a_390_px_screen(new_page, live_server, palace):
    page = new_page("phone")
    overflowing = []
    for name in every_page(page, live_server, palace):
        width = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
        if width[0] > width[1]:
            overflowing.append(f"{name}: {width[0]} px wide")
    assert overflowing == []


def test_controls_are_at_least_24_px_square(new_page, live_server, palace):
    """Buttons, and links that are controls (not links inside a sentence), at both sizes."""
    small = []
    for size in SIZES:
        page = new_page(size)
        for name in every_page(page, live_server, palace):
            small += [f"{name} at {size}: {target}" for target in page.evaluate(SMALL_TARGETS)]
    assert small == []


SMALL_TARGETS = """() => Array.from(document.querySelectorAll(
    'button, .button, input[type=checkbox], input[type=radio], nav a, .crumbs a, .controls a,'
    + ' td a, li a, label a')).filter(e => {
      const box = e.getBoundingClientRect();
      return box.width > 0 && (box.width < 24 || box.height < 24);
    }).map(e => `${e.outerHTML.slice(0, 80)} ${e.getBoundingClientRect().width}x`
      + `${e.getBoundingClientRect().height}`)"""


def test_the_next_item_loaded_in_place_gets_focus_title_and_an_announcement(
    new_page, live_server, palace
):
    page = new_page()
    log_in(page, live_server)
    item = open_items()["drawer pair"]
    page.goto(f"{live_server.url}/items/{item}/")
    page.keyboard.press("x")
    expect(page.locator(".messages")).to_contain_text(f"Done: dismiss on {item}")
    loaded = page.locator("#main [data-item]").get_attribute("data-item")
    assert loaded != item
    expect(page).to_have_title(f"Item {loaded} · Castellan")
    expect(page.locator("#main h1")).to_be_focused()
    expect(page.locator("#announcer")).to_have_attribute("aria-live", "polite")
    expect(page.locator("#announcer")).to_have_text(f"Loaded item {loaded}.")
    described_by = page.locator("#main h1").get_attribute("aria-describedby")
    expect(page.locator(f"#{described_by}")).to_contain_text(f"Done: dismiss on {item}")


def test_single_key_shortcuts_can_be_turned_off_and_on(new_page, live_server, palace):
    page = new_page()
    log_in(page, live_server)
    page.get_by_role("button", name="Turn single-key shortcuts off").first.click()
    item = open_items()["drawer pair"]
    page.goto(f"{live_server.url}/items/{item}/")
    expect(page.locator("body")).to_have_attribute("data-single-keys", "off")
    page.keyboard.press("m")  # would merge, were shortcuts on
    page.keyboard.press("?")
    page.get_by_role("button", name=re.compile("Dismiss")).click()
    expect(page.locator(".messages")).to_contain_text(f"Done: dismiss on {item}")
    assert list(AuditEntry.objects.filter(data__item=item).values_list("action", flat=True)) == [
        "review.dismiss"
    ]
    expect(page.locator("#keys")).not_to_be_visible()
    page.get_by_role("button", name="Turn single-key shortcuts on").first.click()
    expect(page.locator("body")).to_have_attribute("data-single-keys", "on")
    page.wait_for_load_state()
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Turn single-key shortcuts off")).to_be_visible()


def test_two_curators_are_served_different_items(new_page, live_server, palace):
    filters = QueueFilterForm({"type": "drawer"}).filters()
    first, second, third = (str(i.ref) for i in queue_page(filters).items[:3])
    cora, otto = new_page(), new_page()
    log_in(cora, live_server, "cora")
    log_in(otto, live_server, "otto")
    cora.goto(f"{live_server.url}/items/{first}/?type=drawer")
    expect(cora.locator("#hold")).to_contain_text("You hold this item")

    otto.goto(f"{live_server.url}/?type=drawer")
    expect(otto.locator("tr.row", has_text=first)).to_contain_text("taken by cora")
    otto.goto(f"{live_server.url}/items/{first}/?type=drawer")
    expect(otto.locator("#hold")).to_contain_text("Taken by cora")

    otto.goto(f"{live_server.url}/items/{second}/?type=drawer")
    otto.keyboard.press("x")  # the next item: the queue's first that cora does not hold
    expect(otto.locator(".messages")).to_contain_text(f"Done: dismiss on {second}")
    expect(otto.locator("#main [data-item]")).to_have_attribute("data-item", third)

    otto.goto(f"{live_server.url}/items/{first}/?type=drawer")
    otto.keyboard.press("x")  # a hold does not forbid: the 409 is the final guard
    expect(otto.locator(".messages")).to_contain_text(f"Done: dismiss on {first}")
    cora.keyboard.press("m")
    expect(cora.get_by_role("alert")).to_contain_text("otto already decided this item")
