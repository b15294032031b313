"""Clusters: the components, a decision at once (all, some, split), the 409 guard, and the revert
of the whole batch to the exact prior state."""

import pytest

from dedup import errors
from palace.models import (
    AuditEntry,
    DistinctPair,
    Drawer,
    DrawerLink,
    EntityAliasSignature,
    EntityLink,
)
from review import selectors, services
from review.selectors.clusters import beyond_pairs, components, shown_members
from review.services import ClusterChoice, ItemRef
from tests.review.clusters_data import FACT, ada_entities, five_drawers
from tests.review.test_services import state

pytestmark = pytest.mark.django_db


def choice(cluster, canonical, merge=(), distinct=(), mode="merge"):
    return ClusterChoice(
        canonical=str(canonical.uuid),
        merge=frozenset(str(m.uuid) for m in merge),
        distinct=frozenset(str(m.uuid) for m in distinct),
        shown_links=frozenset(cluster.link_ids),
        mode=services.Action(mode),
    )


def test_components_group_connected_edges():
    edges = [(1, 1, 2), (2, 2, 3), (3, 7, 8), (4, 9, 8)]
    grouped = sorted(sorted(e[0] for e in c) for c in components(edges))
    assert grouped == [[1, 2], [3, 4]]


def test_lone_pairs_are_left_out_before_the_components():
    edges = [(1, 1, 2), (2, 3, 4), (3, 4, 5), (4, 8, 9)]
    assert beyond_pairs(edges) == [(2, 3, 4), (3, 4, 5)]


def test_shown_members_are_capped_and_connected():
    star = [(pk, 1, pk + 1) for pk in range(1, 80)]
    shown = shown_members(star, limit=50)
    assert len(shown) == 50
    assert shown[0] == 1  # the oldest is always shown, so the shown members stay connected


def test_queue_lists_a_drawer_and_an_entity_cluster(dedup_settings, django_assert_num_queries):
    five_drawers()
    ada_entities()
    with django_assert_num_queries(5):  # links and members of each kind, and the aliases
        page = selectors.cluster_page(selectors.QueueFilters(type="cluster"))
    assert [(c.ref.kind.value, c.size) for c in page.clusters] == [("d", 5), ("e", 4)]
    assert page.total == 2
    assert page.members == 9
    assert page.clusters[0].scope == "people/preferences"
    assert page.clusters[1].scope == "person"


def test_a_pair_is_not_a_cluster(drawer_link):
    assert selectors.cluster_of(ItemRef.of(drawer_link)) is None


def test_any_open_link_reaches_its_cluster_named_by_the_smallest(dedup_settings):
    five_drawers()
    last = DrawerLink.objects.order_by("-pk").first()
    cluster = selectors.cluster_of(ItemRef.of(last))
    assert cluster.id == f"d{DrawerLink.objects.order_by('pk').first().pk}"


def test_detail_diffs_every_member_against_the_canonical(dedup_settings, django_assert_num_queries):
    drawers = five_drawers()
    ref = ItemRef.of(DrawerLink.objects.order_by("pk").first())
    with django_assert_num_queries(4):
        detail = selectors.cluster_detail(ref, canonical=str(drawers[1].uuid))
    assert detail.canonical == drawers[1]
    changed = {
        m.row.pk: [(s.op, s.text) for s in m.segments if s.op != "equal"] for m in detail.members
    }
    assert changed[drawers[1].pk] == []
    assert changed[drawers[0].pk] == [("insert", "s")]  # "always" against the canonical "alway"
    assert changed[drawers[2].pk] == [("delete", "o"), ("insert", "e"), ("insert", "s")]
    assert len(detail.links) == 10


def test_merge_all_into_the_oldest_then_revert_the_batch(dedup_settings, curator):
    drawers = five_drawers()
    prior = state(None)
    cluster = selectors.cluster_of(ItemRef.of(DrawerLink.objects.first()))
    result = services.decide_cluster(
        cluster=cluster.ref, choice=choice(cluster, drawers[0], merge=drawers[1:]), actor=curator
    )
    assert result.merged == 4
    assert len(result.decided) == 10  # every link between them, one audit row each
    assert {e.batch for e in result.decided} == {result.batch}
    assert list(Drawer.objects.current().values_list("content", flat=True)) == [FACT]
    assert Drawer.objects.get(pk=drawers[0].pk).consolidation["restatements"] == 4
    assert set(DrawerLink.objects.values_list("status", flat=True)) == {"merged"}
    reverts = services.revert_batch(batch=result.batch, actor=curator)
    assert len(reverts) == 10
    assert len({e.batch for e in reverts}) == 1
    assert state(None) == prior


def test_partial_merge_with_a_split_leaves_the_rest_open(dedup_settings, curator):
    drawers = five_drawers()
    cluster = selectors.cluster_of(ItemRef.of(DrawerLink.objects.first()))
    keep, merged, distinct, left = drawers[4], drawers[:2], drawers[2], drawers[3]
    result = services.decide_cluster(
        cluster=cluster.ref,
        choice=choice(cluster, keep, merge=merged, distinct=[distinct]),
        actor=curator,
    )
    current = set(Drawer.objects.current().values_list("pk", flat=True))
    assert current == {keep.pk, distinct.pk, left.pk}
    assert Drawer.objects.get(pk=drawers[0].pk).superseded_by_id == keep.pk
    # distinct against each of the three merged together: three links deleted, remembered
    assert DistinctPair.objects.count() == 3
    assert not DrawerLink.objects.filter(older=distinct, newer=keep).exists()
    open_links = DrawerLink.objects.filter(status="open")
    assert open_links.filter(older=distinct, newer=left).exists()  # distinct vs left open
    assert open_links.count() == 4  # the member left open keeps its four links
    actions = sorted(e.action for e in result.decided)
    assert actions.count("review.delete_link") == 3
    assert actions.count("review.merge") == 3


def test_entities_as_aliases_and_revert(dedup_settings, curator):
    ada, ada_l, lovelace, a_lovelace = ada_entities()
    prior = state(None)
    cluster = selectors.cluster_of(ItemRef.of(EntityLink.objects.first()))
    result = services.decide_cluster(
        cluster=cluster.ref,
        choice=choice(cluster, lovelace, merge=[ada, ada_l, a_lovelace], mode="add_alias"),
        actor=curator,
    )
    lovelace.refresh_from_db()
    assert sorted(lovelace.alias_set.values_list("alias", flat=True)) == [
        "A. Lovelace",
        "Ada",
        "Ada L.",
    ]
    # A person recorded them: indexed, so a typo of one converges as one of the name does.
    indexed = EntityAliasSignature.objects.values_list("alias__alias", flat=True).distinct()
    assert sorted(indexed) == ["A. Lovelace", "Ada", "Ada L."]
    ada.refresh_from_db()
    assert ada.redirect_to == lovelace
    assert set(EntityLink.objects.values_list("status", flat=True)) == {"aliased"}
    services.revert_batch(batch=result.batch, actor=curator)
    assert state(None) == prior


def test_a_link_decided_since_the_page_refuses_and_changes_nothing(dedup_settings, curator):
    drawers = five_drawers()
    cluster = selectors.cluster_of(ItemRef.of(DrawerLink.objects.first()))
    shown = choice(cluster, drawers[0], merge=drawers[1:])
    services.decide(item=f"d{cluster.link_ids[-1]}", action="dismiss", actor=curator)
    prior = state(None)
    with pytest.raises(services.ClusterChanged) as refused:
        services.decide_cluster(cluster=cluster.ref, choice=shown, actor=curator)
    assert f"d{cluster.link_ids[-1]}" in refused.value.message
    assert refused.value.status == 409
    assert state(None) == prior
    assert AuditEntry.objects.count() == 1


def test_a_merge_reachable_only_through_a_distinct_member_is_refused(dedup_settings, curator):
    ada, ada_l, lovelace, a_lovelace = ada_entities()
    # Only through the links among the shown members: drop Ada's direct links but the chain.
    EntityLink.objects.filter(older=ada).exclude(newer=ada_l).delete()
    EntityLink.objects.filter(older=ada_l, newer=lovelace).delete()
    EntityLink.objects.get_or_create(older=ada_l, newer=a_lovelace, defaults={"similarity": 0.6})
    cluster = selectors.cluster_of(ItemRef.of(EntityLink.objects.first()))
    with pytest.raises(errors.InvalidInput, match="through merged members"):
        services.decide_cluster(
            cluster=cluster.ref,
            choice=choice(cluster, ada, merge=[lovelace], distinct=[ada_l]),
            actor=curator,
        )


def test_a_batch_revert_is_blocked_by_a_later_decision_unless_cascaded(dedup_settings, curator):
    drawers = five_drawers()
    cluster = selectors.cluster_of(ItemRef.of(DrawerLink.objects.first()))
    result = services.decide_cluster(
        cluster=cluster.ref,
        choice=choice(cluster, drawers[0], merge=drawers[1:3], distinct=[drawers[3]]),
        actor=curator,
    )
    later = services.decide(
        item=str(ItemRef.of(DrawerLink.objects.get(older=drawers[3], newer=drawers[4]))),
        action="dismiss",
        actor=curator,
    )
    with pytest.raises(services.RevertBlocked) as blocked:
        services.revert_batch(batch=result.batch, actor=curator)
    assert blocked.value.details["depends_on_this"] == [later.pk]
    reverts = services.revert_batch(batch=result.batch, actor=curator, cascade=True)
    assert reverts[0].data["reverts"] == later.pk
    assert not DrawerLink.objects.exclude(status="open").exists()


def test_invalid_choices_are_refused(dedup_settings, curator):
    drawers = five_drawers()
    cluster = selectors.cluster_of(ItemRef.of(DrawerLink.objects.first()))
    with pytest.raises(errors.InvalidInput, match="at least one"):
        services.decide_cluster(
            cluster=cluster.ref, choice=choice(cluster, drawers[0]), actor=curator
        )
    with pytest.raises(errors.InvalidInput, match="either canonical"):
        services.decide_cluster(
            cluster=cluster.ref,
            choice=choice(cluster, drawers[0], merge=[drawers[1]], distinct=[drawers[1]]),
            actor=curator,
        )


def test_a_clusters_audit_rows_keep_each_links_evidence_as_a_pairs_do(dedup_settings, curator):
    """The evidence shown (verdict, similarity, signals) was left out of a cluster's rows."""
    drawers = five_drawers()
    links = {link.pk: link for link in DrawerLink.objects.all()}
    cluster = selectors.cluster_of(ItemRef.of(next(iter(links.values()))))
    result = services.decide_cluster(
        cluster=cluster.ref, choice=choice(cluster, drawers[0], merge=drawers[1:]), actor=curator
    )
    for entry in result.decided:
        link = links[ItemRef.parse(entry.data["item"]).pk]
        assert entry.data["evidence"] == {
            "verdict": link.verdict,
            "similarity": link.similarity,
            "signals": link.signals,
            "via": "cluster",
            "cluster": str(cluster.ref),
        }
