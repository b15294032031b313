"""Every decision, its audit row, its refusal when already decided, and its exact revert."""

import pytest
from django.db import transaction

from dedup import errors
from dedup import services as write
from palace.models import (
    AuditEntry,
    DistinctPair,
    Drawer,
    DrawerLink,
    Entity,
    EntityAlias,
    EntityLink,
)
from review import services
from review.services import ItemRef

pytestmark = pytest.mark.django_db


def state(link):
    """Everything a decision may change, to compare before and after a revert."""
    drawers = list(
        Drawer.objects.order_by("pk").values("pk", "valid_to", "superseded_by", "consolidation")
    )
    entities = list(Entity.objects.order_by("pk").values("pk", "redirect_to", "redirect_kind"))
    aliases = sorted(EntityAlias.objects.values_list("entity", "alias"))
    links = list(DrawerLink.objects.order_by("pk").values()) + list(
        EntityLink.objects.order_by("pk").values()
    )
    return (
        drawers,
        entities,
        aliases,
        links,
        list(
            DistinctPair.objects.values(
                "kind", "low_drawer", "high_drawer", "low_entity", "high_entity"
            )
        ),
    )


def test_dismiss_drawer_link_and_revert(drawer_link, curator):
    prior = state(drawer_link)
    entry = services.decide(
        item=f"d{drawer_link.pk}", action="dismiss", actor=curator, note="both true"
    )
    drawer_link.refresh_from_db()
    assert drawer_link.status == "dismissed"
    assert drawer_link.decided_by == curator
    assert entry.action == "review.dismiss"
    assert entry.actor == curator
    assert entry.target_id == f"d{drawer_link.pk}"
    assert entry.data["note"] == "both true"
    assert entry.before == {"status": "open"}
    assert entry.after == {"status": "dismissed"}
    (undone,) = services.revert(decision=entry, actor=curator)
    assert undone.action == "review.revert"
    assert undone.data["reverts"] == entry.pk
    assert state(drawer_link) == prior


def test_delete_drawer_link_remembers_the_pair_and_revert_restores_it(drawer_link, curator):
    prior = state(drawer_link)
    entry = services.decide(item=f"d{drawer_link.pk}", action="delete_link", actor=curator)
    assert not DrawerLink.objects.exists()
    assert DistinctPair.objects.filter(kind="drawer").count() == 1
    # The pair is never linked again, by a replay or a sweep.
    with pytest.raises(errors.Conflict):
        write.drawer_link(
            newer=drawer_link.newer, older=drawer_link.older, verdict="near", signals={}
        )
    services.revert(decision=entry, actor=curator)
    assert state(drawer_link) == prior


def test_merge_drawers_supersedes_the_newer_and_consolidates(drawer_link, curator):
    prior = state(drawer_link)
    older, newer = drawer_link.older, drawer_link.newer
    entry = services.decide(item=f"d{drawer_link.pk}", action="merge", actor=curator)
    older.refresh_from_db()
    newer.refresh_from_db()
    assert newer.valid_to is not None
    assert newer.superseded_by == older
    assert older.valid_to is None
    record = older.consolidation
    assert [s["drawer"] for s in record["sources"]] == [str(older.uuid), str(newer.uuid)]
    assert record["restatements"] == 1
    assert record["first_seen"] == older.created_at.isoformat()
    assert record["last_seen"] == newer.created_at.isoformat()
    assert record["sources"][1]["source"] == newer.source
    services.revert(decision=entry, actor=curator)
    assert state(drawer_link) == prior


def test_merge_with_the_newer_as_canonical(drawer_link, curator):
    newer = drawer_link.newer
    services.decide(
        item=f"d{drawer_link.pk}", action="merge", actor=curator, canonical=str(newer.uuid)
    )
    assert Drawer.objects.get(pk=drawer_link.older_id).superseded_by_id == newer.pk


def test_add_alias_redirects_later_sightings_and_revert_undoes_it(
    entity_link, curator, dedup_settings
):
    prior = state(entity_link)
    katarina, katerino = entity_link.older, entity_link.newer
    entry = services.decide(item=f"e{entity_link.pk}", action="add_alias", actor=curator)
    assert list(katarina.alias_set.values_list("alias", flat=True)) == ["Katerino"]
    katerino.refresh_from_db()
    assert (katerino.redirect_to, katerino.redirect_kind) == (katarina, "alias")
    # A later sighting of the other spelling converges on the canonical entity.
    assert write.entity_resolve(name="Katerino", kind="person").entity == katarina
    services.revert(decision=entry, actor=curator)
    assert state(entity_link) == prior
    assert write.entity_resolve(name="Katerino", kind="person").entity == katerino


def test_merge_entities_serves_mentions_from_the_canonical(entity_link, curator, api):
    room = write.room_get_or_create(wing="w", room="r")
    drawer = write.drawer_write(room=room, content="A note naming Katerino again.").drawer
    from dedup.services import DedupConfig

    strict = DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)
    write.mention_add(drawer=drawer, name="Katerino", kind="person", config=strict)
    services.decide(item=f"e{entity_link.pk}", action="merge", actor=curator)
    body = api.get(f"/api/entities/{entity_link.older.uuid}/mentions").json()
    assert [m["observation"]["name"] for m in body["results"]] == ["Katerino"]
    detail = api.get(f"/api/entities/{entity_link.newer.uuid}").json()
    assert detail["redirect_to"] == str(entity_link.older.uuid)
    assert detail["redirect_kind"] == "merge"


def test_delete_entity_link_and_dismiss(entity_link, curator, api):
    entry = services.decide(item=f"e{entity_link.pk}", action="delete_link", actor=curator)
    assert api.get(f"/api/entities/{entity_link.newer.uuid}/candidates").json()["candidates"] == []
    assert DistinctPair.objects.filter(kind="entity").exists()
    services.revert(decision=entry, actor=curator)
    services.decide(item=f"e{entity_link.pk}", action="dismiss", actor=curator)
    assert EntityLink.objects.get().status == "dismissed"


@pytest.mark.parametrize("action", ["dismiss", "delete_link", "merge"])
def test_second_decision_is_refused_naming_who_and_when(
    drawer_link, curator, other_curator, action
):
    services.decide(item=f"d{drawer_link.pk}", action=action, actor=curator)
    count = AuditEntry.objects.count()
    with pytest.raises(services.AlreadyDecided) as refused:
        services.decide(item=f"d{drawer_link.pk}", action="dismiss", actor=other_curator)
    assert refused.value.status == 409
    assert "cora already decided this item" in refused.value.message
    assert refused.value.details["decided_by"] == "cora"
    assert AuditEntry.objects.count() == count


@pytest.mark.parametrize(
    ("item", "action", "error", "code"),
    [
        ("d{d}", "add_alias", services.InvalidAction, "invalid_action"),
        ("d{d}", "explode", services.InvalidAction, "invalid_action"),
        ("x1", "dismiss", errors.InvalidInput, "invalid_id"),
        ("d999999", "dismiss", errors.NotFound, "item_not_found"),
    ],
)
def test_bad_decisions_change_nothing(drawer_link, curator, item, action, error, code):
    with pytest.raises(error) as refused:
        services.decide(item=item.format(d=drawer_link.pk), action=action, actor=curator)
    assert refused.value.code == code
    assert not AuditEntry.objects.exists()
    assert DrawerLink.objects.get().status == "open"


def test_revert_twice_is_refused(drawer_link, curator):
    entry = services.decide(item=f"d{drawer_link.pk}", action="dismiss", actor=curator)
    services.revert(decision=entry, actor=curator)
    with pytest.raises(services.AlreadyDecided) as refused:
        services.revert(decision=entry, actor=curator)
    assert refused.value.code == "already_reverted"


def test_revert_refuses_when_a_later_decision_depends_on_it_unless_together(drawer_link, curator):
    entry = services.decide(item=f"d{drawer_link.pk}", action="dismiss", actor=curator)
    services.revert(decision=entry, actor=curator)
    first = services.decide(item=f"d{drawer_link.pk}", action="merge", actor=curator)
    # A third drawer, then a decision touching the canonical drawer again.
    room = drawer_link.older.room
    third = write.drawer_write(room=room, content=drawer_link.older.content.replace("8080", "8082"))
    link = next(lk for lk in third.links if lk.older_id == drawer_link.older_id)
    later = services.decide(item=f"d{link.pk}", action="merge", actor=curator)
    with pytest.raises(services.RevertBlocked) as blocked:
        services.revert(decision=first, actor=curator)
    assert blocked.value.details == {"depends_on_this": [later.pk]}
    undone = services.revert(decision=first, actor=curator, cascade=True)
    assert [u.data["reverts"] for u in undone] == [later.pk, first.pk]
    assert Drawer.objects.current().count() == 3
    assert Drawer.objects.get(pk=drawer_link.older_id).consolidation == {}


def test_bulk_decision_one_batch_one_row_each(curator, dedup_settings):
    room = write.room_get_or_create(wing="w", room="r")
    base = "The quarterly report for the north region is due on the first Monday"
    write.drawer_write(room=room, content=base)
    links = [write.drawer_write(room=room, content=f"{base}{mark}").links[0] for mark in "!?"]
    services.decide(item=f"d{links[0].pk}", action="dismiss", actor=curator)
    result = services.decide_many(
        items=[f"d{lk.pk}" for lk in links], action="dismiss", actor=curator
    )
    assert [e.target_id for e in result.decided] == [f"d{links[1].pk}"]
    assert list(result.refused) == [f"d{links[0].pk}"]
    assert all(e.batch == result.batch for e in result.decided)


def test_item_ref_parsing():
    assert str(ItemRef.parse("d12")) == "d12"
    assert ItemRef.parse("e3").is_drawer is False
    for bad in ["d0", "12", "d-1", "dx", "", None]:
        with pytest.raises(errors.InvalidInput):
            ItemRef.parse(bad)


def test_merged_entity_is_served_from_the_canonical_and_revert_restores_it(
    entity_link, curator, api
):
    from dedup.services import DedupConfig

    strict = DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)
    write.entity_resolve(name="KATERINO", kind="person", config=strict)  # an alias of Katerino
    prior = state(entity_link)
    entry = services.decide(item=f"e{entity_link.pk}", action="merge", actor=curator)
    canonical = api.get(f"/api/entities/{entity_link.older.uuid}").json()
    assert canonical["aliases"] == ["Katerino", "KATERINO"]
    with transaction.atomic():  # a sighting while merged converges (then undo its alias)
        assert write.entity_resolve(name="katerino", kind="person").entity == entity_link.older
        transaction.set_rollback(True)
    services.revert(decision=entry, actor=curator)
    assert state(entity_link) == prior
    assert api.get(f"/api/entities/{entity_link.older.uuid}").json()["aliases"] == []
