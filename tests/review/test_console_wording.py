"""The console's messages in its own words: no key named where there may be no keyboard, plurals
right, a short batch id, an alias that settled other pairs says so, buttons' labels for names."""

import re
import uuid

import pytest

from dedup import services as write
from palace.models import AuditEntry, EntityLink
from review.items import DRAWER_ACTIONS, ENTITY_ACTIONS, done_words
from tests.review.clusters_data import five_drawers
from tests.review.test_cluster_views import cluster_ref, form

pytestmark = pytest.mark.django_db


def shown(client, response) -> str:
    return client.get(response["Location"]).content.decode()


def test_a_decision_names_no_key_in_its_message(as_curator, drawer_link):
    response = as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"})
    page = shown(as_curator, response)
    assert f"Done: dismiss on d{drawer_link.pk}." in page
    assert "Press u" not in page
    assert "Undo dismiss" in page  # the button says it, and works on a phone


def test_a_cluster_of_one_decided_link_is_singular(as_curator, dedup_settings):
    five_drawers()
    ref = cluster_ref()
    data, _ = form(ref, m2="open", m3="open", m4="open")  # member 1 alone merges: one link
    page = shown(as_curator, as_curator.post(f"/clusters/{ref}/decide", data))
    assert "(1 link decided in one batch)" in page


def test_a_bulk_decision_says_items_and_a_short_batch(as_curator, triangle):
    items = [f"d{link.pk}" for link in triangle[:2]]
    page = shown(as_curator, as_curator.post("/bulk", {"items": items, "action": "dismiss"}))
    batch = str(AuditEntry.objects.first().batch)
    assert f"2 items decided in one batch ({batch[:8]})." in page
    assert batch not in page.split("<main")[1].split("undo-offer")[0]
    assert "item(s)" not in page


def test_an_alias_says_which_pairs_it_settled(as_curator, dedup_settings):
    for name in ("Katarina", "Katerino", "Katerina"):
        write.entity_resolve(name=name, kind="person")
    first = EntityLink.objects.get(newer__name="Katerino", older__name="Katarina")
    redundant = EntityLink.objects.get(newer__name="Katerina", older__name="Katerino")
    response = as_curator.post(
        f"/items/e{first.pk}/decide", {"action": "add_alias", "also_dismiss": [f"e{redundant.pk}"]}
    )
    page = shown(as_curator, response)
    assert (
        f"Done: add alias on e{first.pk}, and dismissed e{redundant.pk}: the alias settled it."
        in page
    )


def test_a_bulk_refusal_uses_the_buttons_labels(as_curator, drawer_link, entity_link):
    items = [f"d{drawer_link.pk}", f"e{entity_link.pk}"]
    page = shown(as_curator, as_curator.post("/bulk", {"items": items, "action": "add_alias"}))
    assert (
        f"d{drawer_link.pk}: “Add alias” is not a decision for this item: choose Merge, "
        "Delete link or Dismiss." in page
    )
    assert "delete_link" not in page.split('<select name="action">')[0]
    assert EntityLink.objects.get().status == "aliased"


def test_the_item_buttons_are_the_actions_labels(as_curator, drawer_link, entity_link):
    """The labels a refusal names (Action.label) are the ones the buttons show."""
    for item, actions in (
        (f"d{drawer_link.pk}", DRAWER_ACTIONS),
        (f"e{entity_link.pk}", ENTITY_ACTIONS),
    ):
        page = as_curator.get(f"/items/{item}/").content.decode()
        for action in actions:
            button = (
                rf'value="{action.value}"[^>]*><kbd>\w</kbd> {re.escape(action.label)}</button>'
            )
            assert re.search(button, page), (item, action)


@pytest.mark.parametrize(
    ("action", "words"),
    [
        ("review.add_alias", "add alias"),
        ("review.delete_link", "delete link"),
        ("review.wrong", "judged not the same"),
        ("review.same", "judged the same"),
        ("review.something_new", "something new"),
    ],
)
def test_a_decision_is_said_in_its_buttons_words(action, words):
    """A curator's trial: judging a proposal "Not the same" said "Done: wrong on p99."."""
    assert done_words(action) == words


def test_a_revert_says_what_it_undid(as_curator, drawer_link):
    """After `u` the page said only "Reverted decision #2.", not which action on which item."""
    as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"})
    decision = AuditEntry.objects.get()
    page = shown(as_curator, as_curator.post(f"/audit/{decision.pk}/revert"))
    assert f"Reverted decision #{decision.pk} (dismiss on d{drawer_link.pk})." in page


def test_a_revert_of_a_row_that_is_no_decision_says_what_the_row_is(as_curator, drawer_link):
    """ "No decision with that id." had denied a row the audit log shows (a revert, a seed)."""
    as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"})
    as_curator.post(f"/audit/{AuditEntry.objects.get().pk}/revert")
    revert = AuditEntry.objects.order_by("pk").last()
    page = shown(as_curator, as_curator.post(f"/audit/{revert.pk}/revert"))
    assert f"#{revert.pk} is a revert, which is not reverted" in page
    assert AuditEntry.objects.count() == 2


def test_a_revert_of_an_unknown_batch_says_so_on_the_page_it_lands_on(as_curator):
    """It landed on the batch's 404 page, and its message on the next, unrelated page."""
    response = as_curator.post(f"/batches/{uuid.UUID(int=7)}/revert")
    assert response["Location"] == "/audit/"
    assert "No decision in that batch." in shown(as_curator, response)
    assert "No decision in that batch." not in as_curator.get("/audit/").content.decode()
