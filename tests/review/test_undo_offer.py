"""`/undo` does the decision the Undo offer on screen names, once, and nothing else (the tester:
`u u` reverted two decisions, `u` on the audit log kept going back through the history)."""

import pytest
from django.db import connection
from django.test import Client

from dedup import services as write
from palace.models import AuditEntry
from review import services
from review.models import UndoOffer
from review.services import ItemRef
from review.views import offers
from tests.races import race

BACKUP = "Backups run nightly at two in the morning and are kept for thirty days."

pytestmark = pytest.mark.django_db


def reverts() -> int:
    return AuditEntry.objects.filter(action="review.revert").count()


def decide(client, link, action="dismiss") -> AuditEntry:
    client.post(f"/items/d{link.pk}/decide", {"action": action})
    return AuditEntry.objects.filter(data__item=f"d{link.pk}").latest("pk")


def messages_after(response, client) -> str:
    return client.get(response["Location"]).content.decode()


def test_an_undo_that_names_nothing_undoes_nothing(as_curator, drawer_link):
    decide(as_curator, drawer_link)
    response = as_curator.post("/undo", HTTP_REFERER="http://testserver/audit/")
    assert reverts() == 0
    assert response["Location"] == "/audit/"
    assert "Nothing to undo" in messages_after(response, as_curator)


def test_the_offered_undo_is_done_once(as_curator, drawer_link):
    decision = decide(as_curator, drawer_link)
    as_curator.post("/undo", {"decision": decision.pk})
    second = as_curator.post("/undo", {"decision": decision.pk})
    assert reverts() == 1
    assert "not on offer" in messages_after(second, as_curator)


def test_an_undo_of_a_decision_never_offered_is_refused(as_curator, curator, drawer_link):
    decision = services.decide(
        item=ItemRef.parse(f"d{drawer_link.pk}"), action="dismiss", actor=curator
    )
    as_curator.post("/undo", {"decision": decision.pk})  # decided elsewhere (the API): no offer
    assert reverts() == 0


def test_an_undo_still_shown_in_another_tab_works_once(as_curator, drawer_link):
    first = decide(as_curator, drawer_link)
    room = write.room_get_or_create(wing="ops", room="elsewhere")
    write.drawer_write(room=room, content=BACKUP)
    (other,) = write.drawer_write(room=room, content=BACKUP.upper()).links
    decide(as_curator, other)  # in another tab: the first tab still shows its Undo
    as_curator.post("/undo", {"decision": first.pk})
    as_curator.post("/undo", {"decision": first.pk})
    assert reverts() == 1


def test_an_undo_never_reaches_another_curators_decision(
    client, as_curator, other_curator, triangle
):
    theirs = decide(as_curator, triangle[0])
    client.force_login(other_curator)
    client.post("/undo", {"decision": theirs.pk})
    assert reverts() == 0


def test_the_offered_batch_is_undone_once(as_curator, triangle):
    items = [f"d{link.pk}" for link in triangle]
    as_curator.post("/bulk", {"items": items, "action": "dismiss"})
    batch = str(AuditEntry.objects.first().batch)
    as_curator.post("/undo", {"batch": batch})
    as_curator.post("/undo", {"batch": batch})
    assert reverts() == 3


def test_no_page_carries_an_undo_that_names_no_decision(as_curator, drawer_link):
    decide(as_curator, drawer_link)
    as_curator.get("/")  # the offer is shown here, once
    body = as_curator.get("/audit/").content.decode()
    assert 'action="/undo"' not in body


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_two_tabs_deciding_at_once_both_keep_their_undo(curator, dedup_settings):
    """Each request wrote the session's list of offers back whole, and the last one won: one
    tab's Undo was refused as not on offer, 6 times in 6."""
    room = write.room_get_or_create(wing="ops", room="tabs")
    write.drawer_write(room=room, content=BACKUP)
    (one,) = write.drawer_write(room=room, content=BACKUP.upper()).links
    write.drawer_write(room=room, content="Restores are tested every Monday at nine.")
    (two,) = write.drawer_write(room=room, content="restores are tested every monday at nine").links
    first = Client()
    first.force_login(curator)
    second = Client()
    second.cookies = first.cookies  # one session, two tabs
    race(
        lambda: first.post(f"/items/d{one.pk}/decide", {"action": "dismiss"}),
        lambda: second.post(f"/items/d{two.pk}/decide", {"action": "dismiss"}),
    )
    for link in (one, two):
        entry = AuditEntry.objects.get(data__item=f"d{link.pk}")
        first.post("/undo", {"decision": entry.pk})
    assert reverts() == 2


def test_a_curator_keeps_their_newest_offers_only(as_curator, curator, dedup_settings):
    for n in range(offers.KEEP + 3):
        room = write.room_get_or_create(wing="ops", room=f"room-{n}")
        write.drawer_write(room=room, content=BACKUP)
        (link,) = write.drawer_write(room=room, content=BACKUP.upper()).links
        decide(as_curator, link)
    assert UndoOffer.objects.filter(curator=curator).count() == offers.KEEP
