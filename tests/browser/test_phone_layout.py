"""The console at a phone's width (375 x 812), as a curator's trial found it: the cluster page's
members and the audit log stack into cards instead of scrolling sideways, each field labelled."""

import re

import pytest
from playwright.sync_api import expect

from palace.models import AuditEntry
from tests.browser.test_a11y import log_in, new_page, palace  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 375, "height": 812}

# [page, its table region] scroll widths against their visible widths
OVERFLOW = """() => [document.documentElement.scrollWidth, innerWidth].concat(
    Array.from(document.querySelectorAll('.table-scroll')).map(
        r => r.scrollWidth - r.clientWidth))"""

# The text of each labelled cell's ::before, by row: what a stacked cell is labelled with.
LABELS = """(rows) => rows.map(row => Array.from(row.cells).map(cell => {
    const before = getComputedStyle(cell, '::before');
    const shown = before.display !== 'none' && before.content !== 'none';
    return shown ? before.content.replace(/^"|"$/g, '') : '';
}))"""


@pytest.fixture
def phone(new_page, live_server, palace):  # noqa: F811
    page = new_page("phone")
    page.set_viewport_size(PHONE)
    log_in(page, live_server)
    return page


def assert_no_sideways_scroll(page) -> None:
    page_width, viewport, *regions = page.evaluate(OVERFLOW)
    assert page_width <= viewport
    assert [excess for excess in regions if excess > 0] == []


def test_a_clusters_members_stack_into_cards_with_their_text_in_full(phone, live_server, palace):  # noqa: F811
    phone.goto(f"{live_server.url}/clusters/{palace['cluster']}/")
    assert_no_sideways_scroll(phone)
    texts = phone.locator("table.members td.text")
    expect(texts).to_have_count(5)
    for n in range(5):
        box = texts.nth(n).bounding_box()
        assert box["width"] >= 0.75 * PHONE["width"], box  # was 64 px, about six characters
        assert box["x"] + box["width"] <= PHONE["width"], box
    for control in phone.locator("table.members label.inline").all():
        box = control.bounding_box()
        assert box["height"] >= 24, box
        assert box["x"] + box["width"] <= PHONE["width"], box
    decide = phone.get_by_role("button", name="Decide the cluster").bounding_box()
    assert decide["height"] >= 24


def test_every_audit_row_is_a_labelled_card_with_its_revert_control_on_screen(phone, live_server):
    phone.goto(f"{live_server.url}/audit/")
    assert_no_sideways_scroll(phone)
    reverts = phone.locator("table.audit button", has_text="Revert")
    assert reverts.count() >= 2
    for button in reverts.all():
        button.scroll_into_view_if_needed()
        box = button.bounding_box()
        assert box["x"] >= 0, box
        assert box["x"] + box["width"] <= PHONE["width"], box
        assert box["height"] >= 24, box
    rows = phone.locator("#audit-rows tr[id^=decision-]")
    labels = rows.evaluate_all(LABELS)
    assert len(labels) == AuditEntry.objects.count()
    for row in labels:
        assert row == ["#", "When (UTC)", "Who", "Action", "Item", "Note", "Revert"]


def test_the_queues_stacked_cells_are_labelled(phone, live_server, palace):  # noqa: F811
    expect(phone.locator("table.queue thead")).to_be_hidden()
    labels = phone.locator("table.queue tr.row").evaluate_all(LABELS)
    assert len(labels) >= 5
    for row in labels:  # the first cell a checkbox named "Select dN"
        assert row == ["", "Item", "Rule", "Similarity", "Changes", "Where", "Status"]
    phone.goto(f"{live_server.url}/clusters/{palace['cluster']}/")
    for row in phone.locator("table.evidence tbody tr").evaluate_all(LABELS):
        assert row == ["Link", "Members", "Rule", "Similarity"]


def test_on_a_desktop_the_tables_keep_their_header_rows_and_no_cell_labels(
    new_page,  # noqa: F811
    live_server,
    palace,  # noqa: F811
):
    page = new_page("desktop")
    log_in(page, live_server)
    for url, table in (
        ("/", "table.queue"),
        ("/audit/", "table.audit"),
        (f"/clusters/{palace['cluster']}/", "table.members"),
    ):
        page.goto(live_server.url + url)
        expect(page.locator(f"{table} thead")).to_be_visible()
        labels = page.locator(f"{table} tbody tr").evaluate_all(LABELS)
        assert {label for row in labels for label in row} == {""}


def test_the_queues_filters_are_folded_on_a_phone(phone):
    filters = phone.locator("details.filter-panel")
    expect(filters).not_to_have_attribute("open", "")
    expect(phone.get_by_label("Wing")).to_be_hidden()
    assert phone.locator("table.queue tr.row").first.bounding_box()["y"] < PHONE["height"]
    summary = phone.locator("details.filter-panel > summary")
    assert summary.bounding_box()["height"] >= 24
    summary.click()
    expect(phone.get_by_label("Wing")).to_be_visible()
    phone.get_by_label("Wing").fill("people")
    phone.get_by_label("Wing").press("Tab")  # a change: the results in place
    expect(phone).to_have_url(re.compile(r"wing=people"))
    expect(filters).to_have_attribute("open", "")


@pytest.mark.parametrize("query", ["wing=ops", "type=cluster", "min_similarity=lots"])
def test_a_set_or_refused_filter_is_shown_open_on_a_phone(phone, live_server, query):
    phone.goto(f"{live_server.url}/?{query}")
    expect(phone.locator("details.filter-panel")).to_have_attribute("open", "")
    expect(phone.get_by_label("Wing")).to_be_visible()


def test_on_a_desktop_the_queues_filters_are_open_without_a_summary(
    new_page,  # noqa: F811
    live_server,
    palace,  # noqa: F811
):
    page = new_page("desktop")
    log_in(page, live_server)
    expect(page.get_by_label("Wing")).to_be_visible()
    expect(page.locator("details.filter-panel > summary")).to_be_hidden()


# Each shown chart text's size on screen: its font size in the SVG's units times the scale.
CHART_TEXT = """() => Array.from(document.querySelectorAll('svg.chart')).filter(
    svg => svg.getBoundingClientRect().width > 0).flatMap(svg => {
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      return Array.from(svg.querySelectorAll('text')).map(
        text => parseFloat(getComputedStyle(text).fontSize) * scale);
    })"""


@pytest.mark.parametrize("width", [375, 640, 720, 1440])
def test_the_charts_text_is_readable_at_any_width(new_page, live_server, palace, width):  # noqa: F811
    page = new_page("phone")
    page.set_viewport_size({"width": width, "height": 812})
    log_in(page, live_server)
    page.goto(f"{live_server.url}/stats/")
    page_width, viewport, *_ = page.evaluate(OVERFLOW)
    assert page_width <= viewport
    assert page.locator("svg.chart:visible").count() == 2  # one drawing of each chart
    sizes = page.evaluate(CHART_TEXT)
    assert len(sizes) > 14
    assert min(sizes) >= 11, sizes  # 6.3 px at 375 px
