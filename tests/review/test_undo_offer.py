"""`/undo` does the decision the Undo offer on screen names, once, and nothing else (the tester:
`u u` reverted two decisions, `u` on the audit log kept going back through the history)."""

import pytest

from dedup import services as write
from palace.models import AuditEntry
from review import services
from review.services import ItemRef

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
