"""Choosing which drawer survives, and deciding clusters at once, in a real browser; each effect
checked in the page and in the database, and each cluster decision reverted as one batch."""

import re

import pytest
from playwright.sync_api import expect

from dedup import services as write
from palace.models import AuditEntry, Drawer, DrawerLink, Entity, EntityLink
from tests.browser.test_console import log_in
from tests.review.clusters_data import FACT, ada_entities, five_drawers

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DARK = "The curator prefers dark mode in the editor, the terminal and every dashboard at work."
LIGHT = DARK.replace("dark", "light")


def test_the_newer_drawer_survives_a_merge_when_chosen_with_key_2(page, live_server, curator):
    room = write.room_get_or_create(wing="people", room="preferences")
    dark = write.drawer_write(room=room, content=DARK).drawer
    (link,) = write.drawer_write(room=room, content=LIGHT).links
    log_in(page, live_server)
    page.goto(f"{live_server.url}/items/d{link.pk}/")
    keep_newer = page.get_by_role("radio", name=re.compile("the newer"))
    expect(page.get_by_role("radio", name=re.compile("the older"))).to_be_checked()
    page.keyboard.press("2")
    expect(keep_newer).to_be_checked()
    page.keyboard.press("m")
    expect(page.get_by_text(re.compile("Done: merge"))).to_be_visible()
    dark.refresh_from_db()
    light = Drawer.objects.get(content=LIGHT)
    assert dark.superseded_by == light
    assert light.valid_to is None
    assert light.consolidation["restatements"] == 1


def test_a_four_name_entity_cluster_decided_at_once_then_reverted(
    page, live_server, curator, screenshot
):
    ada, ada_l, lovelace, a_lovelace = ada_entities()
    log_in(page, live_server)
    page.get_by_label("Type").select_option("cluster")
    row = page.locator("table.clusters tbody tr.row")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Ada Lovelace")
    row.get_by_role("link").click()
    expect(page.get_by_role("heading", name=re.compile("Cluster of 4 entities"))).to_be_visible()
    page.get_by_role("link", name="Make member 3 canonical").click()  # Ada Lovelace
    expect(page.locator("tr.canonical-row")).to_contain_text("Ada Lovelace")
    member = page.locator("tr.member").nth(1)  # Ada L., oldest first
    member.get_by_role("radio", name="distinct").check()
    screenshot("cluster-entities")
    page.get_by_role("button", name=re.compile("Decide the cluster")).click()
    expect(
        page.get_by_text(re.compile("2 merged into the canonical member, 1 marked distinct"))
    ).to_be_visible()
    lovelace.refresh_from_db()
    assert sorted(lovelace.alias_set.values_list("alias", flat=True)) == ["A. Lovelace", "Ada"]
    assert Entity.objects.get(pk=ada.pk).redirect_to == lovelace
    assert Entity.objects.get(pk=a_lovelace.pk).redirect_to == lovelace
    assert Entity.objects.get(pk=ada_l.pk).redirect_to is None
    assert (
        not EntityLink.objects.filter(status="open")
        .exclude(older=ada_l)
        .exclude(newer=ada_l)
        .exists()
    )

    page.get_by_role("button", name=re.compile("Revert all")).click()
    expect(page.get_by_text(re.compile("Reverted .* decisions as one"))).to_be_visible()
    assert set(EntityLink.objects.values_list("status", flat=True)) == {"open"}
    assert EntityLink.objects.count() == 5
    assert not lovelace.alias_set.exists()
    assert not Entity.objects.exclude(redirect_to=None).exists()


def test_a_five_drawer_cluster_reached_with_the_keyboard_decided_then_reverted(
    page, live_server, curator, screenshot
):
    drawers = five_drawers()
    log_in(page, live_server)
    page.goto(f"{live_server.url}/?type=cluster")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name=re.compile("Cluster of 5 drawers"))).to_be_visible()
    expect(page.locator("tr.member:has(ins, del)")).to_have_count(4)  # all but the canonical
    screenshot("cluster-drawers")
    page.get_by_role(
        "button", name="Decide the cluster"
    ).click()  # all into the oldest: the default
    expect(page.get_by_text(re.compile("4 merged into the canonical member"))).to_be_visible()
    assert list(Drawer.objects.current().values_list("content", flat=True)) == [FACT]
    assert Drawer.objects.get(pk=drawers[0].pk).consolidation["restatements"] == 4
    batch = AuditEntry.objects.get(
        action="review.merge", data__item=f"d{DrawerLink.objects.order_by('pk').first().pk}"
    ).batch
    assert AuditEntry.objects.filter(batch=batch).count() == 10

    page.get_by_role("button", name=re.compile("Revert all 10 decisions")).click()
    expect(page.get_by_text(re.compile("Reverted 10 decisions as one"))).to_be_visible()
    assert Drawer.objects.current().count() == 5
    assert set(DrawerLink.objects.values_list("status", flat=True)) == {"open"}
    assert Drawer.objects.get(pk=drawers[0].pk).consolidation == {}


def test_no_key_decides_a_cluster(page, live_server, curator):
    """A single key never decides up to 50 members at once: the button is the confirmation."""
    five_drawers()
    log_in(page, live_server)
    page.goto(f"{live_server.url}/?type=cluster")
    page.locator("table.clusters tbody tr.row").get_by_role("link").first.click()
    expect(page.get_by_role("heading", name=re.compile("Cluster of 5 drawers"))).to_be_visible()
    page.locator("tr.member").nth(1).get_by_role("radio", name="leave open").focus()
    for key in "amdx":
        page.keyboard.press(key)
    page.wait_for_timeout(500)
    assert not AuditEntry.objects.exists()
    expect(page.get_by_role("heading", name=re.compile("Cluster of 5 drawers"))).to_be_visible()


def test_a_double_click_decides_a_cluster_once(page, live_server, curator):
    five_drawers()
    log_in(page, live_server)
    page.goto(f"{live_server.url}/?type=cluster")
    page.locator("table.clusters tbody tr.row").get_by_role("link").first.click()
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    # A second click that lands after the decision's response, before the next page is shown.
    page.evaluate(
        """() => document.addEventListener("htmx:afterRequest", () => setTimeout(() =>
            document.querySelector(".cluster-decide button.primary")?.click(), 0))"""
    )
    page.get_by_role("button", name="Decide the cluster").click()
    expect(page.get_by_text(re.compile("4 merged into the canonical member"))).to_be_visible()
    page.wait_for_timeout(300)
    assert len([url for url in posts if url.endswith("/decide")]) == 1
