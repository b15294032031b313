"""Issue 13, defects 6 and 9 in a real browser: a sweep applied after its sample was judged, and
the queue's filter errors and gone items, each checked in the page and in the database."""

import pytest
from playwright.sync_api import expect

from dedup import services as write
from dedup.services import DedupConfig
from palace.models import DistinctPair
from review.models import Proposal
from review.services import sweeps

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
OFF = DedupConfig(enabled=False, near_threshold=0.9, entity_fuzzy=False)
FACTS = [
    "The staging database is refreshed from an anonymised production dump every Monday.",
    "Backups run nightly at two in the morning and are kept for thirty days on the NAS.",
]
PORT = "For local development always use port 8080 for the API server."


def log_in(page, live_server, then: str = "/"):
    page.goto(f"{live_server.url}{then}")
    page.get_by_label("Username").fill("cora")
    page.get_by_label("Password").fill("secret-pass-1")
    page.get_by_role("button", name="Log in").click()


@pytest.fixture
def sampled_run(curator):
    room = write.room_get_or_create(wing="ops", room="runbooks")
    for fact in FACTS:
        for text in (fact, fact, fact.replace("nightly", "nigthly").replace("dump", "dupm")):
            write.drawer_write(room=room, content=text, mode=write.WriteMode.MINED, config=OFF)
    run = sweeps.execute(sweeps.start(threshold=0.9))
    sweeps.draw_sample(run, per_stratum=1)
    return run


def test_apply_records_a_judged_distinct_pair_and_explains_the_result(
    page, live_server, sampled_run, screenshot
):
    log_in(page, live_server, f"/sweeps/{sampled_run.pk}/")
    to_judge = page.locator("section.side").first
    judged = int(to_judge.get_attribute("aria-label").split()[-1])
    to_judge.get_by_role("button", name="Not the same").click()
    expect(page.get_by_role("region", name=f"Proposal {judged}")).to_have_count(0)
    page.get_by_label("At or above").fill("0.9")
    page.get_by_role("button", name="Apply", exact=True).click()
    expect(page.locator("ul.reach")).to_contain_text("1 recorded distinct")  # the reach first
    page.get_by_role("button", name=f"Apply sweep #{sampled_run.pk}").click()
    applied = page.locator("ul.applications li")
    expect(applied).to_have_count(1)
    expect(applied).to_contain_text("1 judged distinct -> recorded distinct")
    screenshot("sweep-applied-explained")
    proposal = Proposal.objects.get(pk=judged)
    assert proposal.status == Proposal.Status.DISTINCT
    assert DistinctPair.objects.filter(
        **DistinctPair.of("drawer", proposal.newer_pk, proposal.older_pk)
    ).exists()


def test_an_invalid_filter_shows_the_error_and_no_rows(page, live_server, curator):
    room = write.room_get_or_create(wing="ops", room="dev")
    write.drawer_write(room=room, content=PORT)
    write.drawer_write(room=room, content=PORT.replace("8080", "8081"))
    log_in(page, live_server)
    rows = page.locator("table.queue tbody tr.row")
    expect(rows).to_have_count(1)
    page.get_by_label("Similarity from").fill("0.9")
    page.get_by_label("Similarity to", exact=True).fill("0.5")
    page.get_by_label("Similarity to", exact=True).press("Tab")  # change: htmx filters in place
    expect(page.get_by_role("alert")).to_contain_text(
        "“Similarity from” must not be above “Similarity to”"
    )
    expect(rows).to_have_count(0)
    page.get_by_label("Wing").fill("OPS")
    page.get_by_label("Similarity to", exact=True).fill("")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)  # the wing filter ignores case


def test_an_item_whose_drawer_was_deleted_says_so(page, live_server, curator):
    room = write.room_get_or_create(wing="ops", room="dev")
    write.drawer_write(room=room, content=PORT)
    (link,) = write.drawer_write(room=room, content=PORT.replace("8080", "8081")).links
    write.drawer_delete(drawer=link.newer, actor=curator)
    log_in(page, live_server, f"/items/d{link.pk}/")
    expect(page.get_by_role("status")).to_contain_text(
        f"This link no longer exists: its drawer {link.newer.uuid} was deleted by cora"
    )
    page.get_by_role("link", name="See it in the audit log").click()
    expect(page.locator("#audit-rows")).to_contain_text("drawer.delete")
