"""A bulk decision takes at most MAX_BULK items, and a revert's note is held to a decision's
length, in the service (the console's forms are the sender's): refused whole, nothing decided."""

import pytest

from dedup import services as write
from dedup.errors import InvalidInput
from palace.models import AuditEntry, DrawerLink
from review import services
from review.items import MAX_NOTE
from review.selectors import MAX_BULK
from review.services import decisions
from tests.review.test_console_wording import shown

pytestmark = pytest.mark.django_db
FACT = "The staging database is refreshed from an anonymised production dump every Monday."


@pytest.fixture
def link(dedup_settings):
    write.drawer_write_in(wing="ops", room="db", content=FACT)
    write.drawer_write_in(wing="ops", room="db", content=FACT.replace("refreshed", "refershed"))
    return DrawerLink.objects.get()


def test_more_than_max_bulk_items_are_refused_before_any_is_decided(link, curator):
    items = [f"d{link.pk}"] + [f"d{10**6 + i}" for i in range(MAX_BULK)]
    with pytest.raises(InvalidInput) as refused:
        services.decide_many(items=items, action="dismiss", actor=curator)
    assert "At most 1,000 items" in refused.value.message
    assert AuditEntry.objects.count() == 0


def test_the_console_says_so_in_one_message(link, as_curator, monkeypatch):
    """(A form holds at most DATA_UPLOAD_MAX_NUMBER_FIELDS fields, 1,000: the bound is lowered
    here to reach the refusal through the console.)"""
    monkeypatch.setattr(decisions, "MAX_BULK", 2)
    items = [f"d{link.pk}"] * 3
    page = shown(as_curator, as_curator.post("/bulk", {"items": items, "action": "dismiss"}))
    refusal = "At most 2 items can be decided at once: decide the rest in another batch."
    assert page.count(refusal) == 1
    assert DrawerLink.objects.get().status == DrawerLink.Status.OPEN


def test_a_bulk_note_too_long_is_refused_once(link, curator):
    with pytest.raises(InvalidInput):
        services.decide_many(
            items=[f"d{link.pk}"], action="dismiss", actor=curator, note="x" * (MAX_NOTE + 1)
        )
    assert AuditEntry.objects.count() == 0


@pytest.mark.parametrize("how", ["one", "batch"])
def test_a_revert_note_too_long_is_refused_and_reverts_nothing(link, curator, how):
    decision = services.decide(item=f"d{link.pk}", action="dismiss", actor=curator)
    note = "x" * (MAX_NOTE + 1)
    with pytest.raises(InvalidInput) as refused:
        if how == "one":
            services.revert(decision=decision.pk, actor=curator, note=note)
        else:
            services.revert_batch(batch=decision.batch, actor=curator, note=note)
    assert refused.value.details == {"field": "note"}
    assert services.reverts_of(decision) is None


def test_the_console_refuses_a_revert_note_too_long(link, curator, as_curator):
    decision = services.decide(item=f"d{link.pk}", action="dismiss", actor=curator)
    response = as_curator.post(f"/audit/{decision.pk}/revert", {"note": "x" * (MAX_NOTE + 1)})
    assert "note must be text of at most 2,000 characters." in shown(as_curator, response)
    assert services.reverts_of(decision) is None
