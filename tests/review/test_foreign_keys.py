"""Rows that refer to rows do it with foreign keys: proposals, distinct pairs and reverts."""

import pytest
from django.db import IntegrityError, transaction

from dedup import services as write
from dedup.errors import DomainError
from palace.models import AuditEntry, DistinctPair, Drawer, DrawerLink
from review import services as decisions
from review.models import Proposal
from review.selectors.audit import not_reverted
from review.services import sweeps as sweep_services
from tests.review.test_sweeps import FACT, legacy, run_sweep
from tests.review.test_views import count

pytestmark = pytest.mark.django_db


@pytest.fixture
def proposal(dedup_settings):
    room = write.room_get_or_create(wing="ops", room="runbooks")
    legacy(room, FACT)
    legacy(room, FACT.replace("refreshed", "refershed"))
    (found,) = run_sweep().proposals.all()
    return found


def test_a_proposal_refers_to_its_drawers_by_foreign_key(proposal):
    newer, older = Drawer.objects.order_by("-pk")
    assert proposal.newer_drawer == newer
    assert proposal.older_drawer == older
    assert proposal.newer_entity is None
    assert proposal.older_entity is None


def test_deleting_a_drawer_keeps_its_proposal_and_the_texts_it_froze(proposal, curator):
    decisions.sweeps.judge(proposal, verdict="same", actor=curator)
    texts = proposal.texts
    write.drawer_delete(drawer=proposal.newer_drawer, actor=curator)
    proposal.refresh_from_db()
    assert proposal.newer_drawer is None
    assert proposal.older_drawer_id is not None
    assert proposal.texts == texts
    assert proposal.verdict == "same"  # the run's measured precision is unchanged


def test_applying_a_proposal_whose_drawer_is_gone_links_nothing(proposal, curator):
    write.drawer_delete(drawer=proposal.newer_drawer, actor=curator)
    with pytest.raises(DomainError, match="1 a side deleted or merged away"):
        sweep_services.apply(proposal.run, threshold=0.9, merge_tiers=(), actor=curator)
    assert not DrawerLink.objects.exists()


def test_applied_link_is_a_foreign_key_that_the_reverse_clears(proposal, curator):
    sweep_services.apply(proposal.run, threshold=0.9, merge_tiers=(), actor=curator)
    proposal.refresh_from_db()
    assert proposal.applied_drawer_link == DrawerLink.objects.get()
    assert proposal.applied_link_id == proposal.applied_drawer_link_id
    sweep_services.reverse(proposal.run, actor=curator)
    proposal.refresh_from_db()
    assert proposal.applied_drawer_link is None


def test_a_proposal_cannot_name_sides_of_the_other_kind(proposal):
    with pytest.raises(IntegrityError), transaction.atomic():
        Proposal.objects.filter(pk=proposal.pk).update(kind=Proposal.Kind.ENTITY)


def test_a_distinct_pair_refers_to_its_drawers_and_goes_with_them(proposal, curator):
    link, _ = write.drawer_link(
        newer=proposal.newer_drawer, older=proposal.older_drawer, verdict="near", signals={}
    )
    decisions.decide(item=f"d{link.pk}", action="delete_link", actor=curator)
    pair = DistinctPair.objects.get()
    assert pair.low_drawer == proposal.older_drawer
    assert pair.high_drawer == proposal.newer_drawer
    write.drawer_delete(drawer=proposal.newer_drawer, actor=curator)
    assert not DistinctPair.objects.exists()


def test_a_distinct_pair_is_ordered_and_of_one_kind(proposal):
    newer, older = proposal.newer_drawer, proposal.older_drawer
    with pytest.raises(IntegrityError), transaction.atomic():
        DistinctPair.objects.create(kind="drawer", low_drawer=newer, high_drawer=older)
    with pytest.raises(IntegrityError), transaction.atomic():
        DistinctPair.objects.create(kind="entity", low_drawer=older, high_drawer=newer)
    assert not DistinctPair.objects.exists()


def test_a_revert_points_at_the_decision_it_reverts(drawer_link, curator):
    entry = decisions.decide(item=f"d{drawer_link.pk}", action="dismiss", actor=curator)
    (undone,) = decisions.revert(decision=entry, actor=curator)
    assert undone.reverts == entry
    assert not not_reverted(AuditEntry.objects.filter(pk=entry.pk)).exists()


def test_sweep_queue_item_and_audit_pages_keep_a_constant_query_count(proposal, client, curator):
    client.force_login(curator)
    room = proposal.newer_drawer.room

    def grow(start, n):
        for i in range(start, start + n):
            older = legacy(room, f"Invoice {i} for the cleaning of building {i} was paid in full")
            newer = legacy(room, f"Invoice {i} for the cleaning of building {i} was payed in full")
            grown = Proposal.objects.create(
                run=proposal.run,
                kind="drawer",
                newer_drawer=newer,
                older_drawer=older,
                tier="near",
                score=0.95,
                texts={"newer": newer.content, "older": older.content},
            )
            judged = decisions.sweeps.judge(grown, verdict="same", actor=curator)
            decisions.revert(decision=judged, actor=curator)

    grow(0, 2)
    pages = (f"/?run={proposal.run.pk}", f"/items/p{proposal.pk}/", "/audit/")
    before = [count(client, url) for url in pages]
    grow(2, 20)
    assert [count(client, url) for url in pages] == before
