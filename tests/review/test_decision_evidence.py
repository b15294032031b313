"""Issue 13, defect 8: the evidence a decision's audit row keeps is read from the item's link on
the server; a field posted by the browser cannot forge it."""

import json

import pytest

from palace.models import AuditEntry

pytestmark = pytest.mark.django_db


def test_the_item_page_posts_no_evidence_field(as_curator, drawer_link):
    page = as_curator.get(f"/items/d{drawer_link.pk}/").content.decode()
    assert 'name="evidence"' not in page


def test_a_forged_evidence_field_has_no_effect(as_curator, drawer_link):
    forged = json.dumps({"similarity": 1.0, "signals": {"same_hash": True}, "forged": "yes"})
    response = as_curator.post(
        f"/items/d{drawer_link.pk}/decide", {"action": "dismiss", "evidence": forged}
    )
    assert response.status_code == 302
    evidence = AuditEntry.objects.get().data["evidence"]
    assert "forged" not in evidence
    assert evidence["similarity"] == drawer_link.similarity
    assert evidence["signals"] == drawer_link.signals
    assert evidence["verdict"] == drawer_link.verdict


def test_an_entity_decision_keeps_the_links_distance(as_curator, entity_link):
    as_curator.post(f"/items/e{entity_link.pk}/decide", {"action": "dismiss", "evidence": "{"})
    evidence = AuditEntry.objects.get().data["evidence"]
    assert evidence == {
        "via": "console",
        "similarity": entity_link.similarity,
        "distance": entity_link.distance,
    }
