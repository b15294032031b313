"""The filters' labels in a real Chromium: each field's accessible name is its form's label
(review/forms.py), the name a refused filter's message gives it; the similarity range's upper
end is drawn "to" and named "Similarity to", taking no more room than the "to" did."""

import pytest
from playwright.sync_api import expect

from review.forms import AuditFilterForm, QueueFilterForm

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PAGES = {"/": QueueFilterForm, "/audit/": AuditFilterForm}
SIZES = {"desktop": (1280, 900), "phone": (390, 844)}


def log_in(page, live_server, then: str = "/"):
    page.goto(f"{live_server.url}{then}")
    page.get_by_label("Username").fill("cora")
    page.get_by_label("Password").fill("secret-pass-1")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("form.filters")).to_be_attached()


@pytest.mark.parametrize("url", PAGES)
def test_each_filter_is_named_by_its_forms_label(page, live_server, curator, url):
    log_in(page, live_server, url)
    for name, field in PAGES[url].base_fields.items():
        control = page.locator(f'form.filters [name="{name}"]')
        expect(control).to_have_accessible_name(field.label)


def test_the_upper_similarity_is_found_by_its_label_not_by_to_alone(page, live_server, curator):
    log_in(page, live_server)
    upper = page.get_by_label("Similarity to", exact=True)
    expect(upper).to_have_attribute("name", "max_similarity")
    expect(page.get_by_label("to", exact=True)).to_have_count(0)


@pytest.mark.parametrize("size", SIZES)
def test_the_upper_similarity_label_takes_the_room_of_its_to(browser, live_server, curator, size):
    """The hidden whole label takes no place: the label is as wide as its field, as with "to"
    alone."""
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        log_in(page, live_server, "/?max_similarity=1")  # a filter set: open on a phone too
        label = page.locator("label").filter(has=page.locator('[name="max_similarity"]'))
        field = page.locator('[name="max_similarity"]')
        assert label.bounding_box()["width"] == field.bounding_box()["width"]
        expect(label.locator(".visually-hidden")).to_have_text("Similarity")
    finally:
        context.close()
