"""Reverts that meet a changed palace (issue 10, items 4 and 5) and a sweep's reverse that puts
back every proposal it touched (item 8): refused with a clear 409 and nothing written, or
restored as far as it can be and said so in the audit row."""

import pytest

from dedup import services as write
from palace.models import AuditEntry, Drawer, DrawerLink
from review import services
from review.models import Proposal
from review.services import sweeps as sweep_services
from tests.conftest import person_client

pytestmark = pytest.mark.django_db


def revert_through_api(user, entry):
    return person_client(user).post(f"/api/review/decisions/{entry.pk}/revert", {}, format="json")


def delete(drawer, actor):
    write.drawer_delete(drawer=Drawer.objects.get(pk=drawer.pk), actor=actor)


# --- item 4: a drawer of the item was deleted since the decision -------------------------------


@pytest.mark.parametrize("action", ["dismiss", "delete_link", "merge"])
@pytest.mark.parametrize("side", ["newer", "older"])
def test_revert_after_a_drawer_of_the_item_was_deleted_is_a_clear_409(
    drawer_link, curator, action, side
):
    if action == "merge":
        pytest.skip("a merge one of whose drawers was deleted: revertible in part (below)")
    entry = services.decide(item=f"d{drawer_link.pk}", action=action, actor=curator)
    delete(getattr(drawer_link, side), curator)
    rows = AuditEntry.objects.count()
    response = revert_through_api(curator, entry)
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "revert_target_deleted"
    assert f"{side} drawer" in body["error"]
    assert "deleted" in body["error"]
    assert AuditEntry.objects.count() == rows
    assert not DrawerLink.objects.exists()


def test_revert_of_a_merge_whose_kept_drawer_was_deleted_makes_the_other_current(
    drawer_link, curator
):
    older, newer = drawer_link.older, drawer_link.newer
    entry = services.decide(item=f"d{drawer_link.pk}", action="merge", actor=curator)
    delete(older, curator)
    response = revert_through_api(curator, entry)
    assert response.status_code == 200
    restored = Drawer.objects.get(pk=newer.pk)
    assert restored.valid_to is None
    assert restored.superseded_by is None
    (row,) = AuditEntry.objects.filter(action="review.revert")
    assert row.data["reverts"] == entry.pk
    assert len(row.data["not_restored"]) == 2
    assert "link" in row.data["not_restored"][0]
    assert "consolidation" in row.data["not_restored"][1]


def test_revert_of_a_merge_whose_merged_away_drawer_was_deleted_restores_what_it_can(
    drawer_link, curator
):
    older, newer = drawer_link.older, drawer_link.newer
    entry = services.decide(item=f"d{drawer_link.pk}", action="merge", actor=curator)
    assert Drawer.objects.get(pk=older.pk).consolidation  # the merged-away drawer's provenance
    delete(newer, curator)
    response = revert_through_api(curator, entry)
    assert response.status_code == 200
    assert Drawer.objects.get(pk=older.pk).consolidation == older.consolidation
    (row,) = AuditEntry.objects.filter(action="review.revert")
    assert row.data["not_restored"] == [
        "the link, deleted with the merged-away drawer",
        f"the merged-away drawer (drawer {newer.pk}), deleted since: it stays deleted",
    ]


def three_variants():
    room = write.room_get_or_create(wing="ops", room="dev")
    texts = [
        "Backups run nightly at two.",
        "Backups run nightly at two!",
        "backups run nightly at two",
    ]
    drawers = [write.drawer_write(room=room, content=text).drawer for text in texts]
    link = lambda newer: DrawerLink.objects.get(older=drawers[0], newer=newer)  # noqa: E731
    return drawers, link


def test_deleting_one_merged_away_drawer_blocks_no_earlier_merge(dedup_settings, curator):
    """B and C merged into A, then C deleted: the merge of B depends on C's, which cannot be
    undone whole; both are reverted, C's as far as it can be, and B is current again."""
    (a, b, c), link = three_variants()
    first = services.decide(item=f"d{link(b).pk}", action="merge", actor=curator)
    services.decide(item=f"d{link(c).pk}", action="merge", actor=curator)
    delete(c, curator)
    response = person_client(curator).post(
        f"/api/review/decisions/{first.pk}/revert", {"cascade": True}, format="json"
    )
    assert response.status_code == 200
    assert Drawer.objects.get(pk=b.pk).valid_to is None
    assert Drawer.objects.get(pk=a.pk).consolidation == a.consolidation


def test_console_shows_why_a_revert_after_a_deletion_is_refused(client, curator, drawer_link):
    client.force_login(curator)
    entry = services.decide(item=f"d{drawer_link.pk}", action="dismiss", actor=curator)
    delete(drawer_link.newer, curator)
    response = client.post(f"/audit/{entry.pk}/revert", {"next": "/audit/"}, follow=True)
    assert response.status_code == 200
    assert "newer drawer of this item was deleted" in response.content.decode()
    assert not AuditEntry.objects.filter(action="review.revert").exists()


def test_console_says_what_a_partial_revert_could_not_restore(client, curator, drawer_link):
    client.force_login(curator)
    entry = services.decide(item=f"d{drawer_link.pk}", action="merge", actor=curator)
    delete(drawer_link.older, curator)
    response = client.post(f"/audit/{entry.pk}/revert", {"next": "/audit/"}, follow=True)
    assert response.status_code == 200
    assert "not restored" in response.content.decode()


# --- item 5: a revert never re-creates an exact copy -------------------------------------------


def test_revert_of_a_merge_refuses_to_recreate_an_exact_copy(drawer_link, curator):
    newer = drawer_link.newer
    entry = services.decide(item=f"d{drawer_link.pk}", action="merge", actor=curator)
    # The merged-away drawer is superseded, so the same text written again is stored.
    again = write.drawer_write(room=newer.room, content=newer.content)
    assert again.created
    rows = AuditEntry.objects.count()
    response = revert_through_api(curator, entry)
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "revert_would_duplicate"
    assert body["details"]["copy"] == str(again.drawer.uuid)
    assert AuditEntry.objects.count() == rows
    assert Drawer.objects.get(pk=newer.pk).valid_to is not None
    assert DrawerLink.objects.get(pk=drawer_link.pk).status == "merged"


def test_revert_of_a_merge_beside_a_named_copy_is_allowed(drawer_link, curator):
    """Named writes are always stored, so a named copy is no breach of the room's invariant."""
    newer = drawer_link.newer
    entry = services.decide(item=f"d{drawer_link.pk}", action="merge", actor=curator)
    write.drawer_write(room=newer.room, content=newer.content, name="port")
    services.revert(decision=entry, actor=curator)
    assert Drawer.objects.get(pk=newer.pk).valid_to is None


def test_revert_of_a_diary_merge_ignores_another_agents_copy(curator, dedup_settings):
    room = write.room_get_or_create(wing="agents", room="diary")
    text = "Deployed the billing service at noon; the canary stayed green for an hour."
    write.drawer_write(room=room, content=text, mode=write.WriteMode.DIARY, agent="alice")
    near = text.replace("noon", "n00n")
    (link,) = write.drawer_write(
        room=room, content=near, mode=write.WriteMode.DIARY, agent="alice"
    ).links
    entry = services.decide(item=f"d{link.pk}", action="merge", actor=curator)
    write.drawer_write(room=room, content=near, mode=write.WriteMode.DIARY, agent="bob")
    services.revert(decision=entry, actor=curator)
    assert Drawer.objects.get(pk=link.newer_id).valid_to is None


# --- item 8: a sweep's reverse restores the proposals it discarded -----------------------------


def test_reverse_restores_the_proposals_an_apply_discarded(curator, dedup_settings):
    off = write.DedupConfig(enabled=False, near_threshold=0.9, entity_fuzzy=False)
    room = write.room_get_or_create(wing="ops", room="runbooks")
    fact = "The staging database is refreshed from an anonymised production dump every Monday."
    for text in (fact, fact.upper(), fact.replace("Monday", "Friday")):
        write.drawer_write(room=room, content=text, config=off)
    run = sweep_services.execute(sweep_services.start(threshold=0.9))
    already = run.proposals.order_by("pk").last()
    already.status = Proposal.Status.DISCARDED  # discarded before this apply: stays so
    already.save(update_fields=["status"])
    prior = dict(run.proposals.values_list("pk", "status"))
    applied = sweep_services.apply(
        run, threshold=1.0, tiers=["exact"], discard_below=True, actor=curator
    )
    assert applied.discarded >= 1
    sweep_services.reverse(run, actor=curator)
    assert dict(run.proposals.values_list("pk", "status")) == prior
    (row,) = AuditEntry.objects.filter(action="sweep.reverse")
    assert row.after["restored"] == applied.discarded
