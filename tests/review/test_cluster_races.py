"""A cluster decided while curators decide its pairs, with real threads and connections: either
the cluster's decision applies and the pair's is refused, or the pair's applies and the cluster's
is refused whole (409 cluster_changed or already_decided), never both, never half. On PostgreSQL
only, like the other race tests."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections

from dedup.errors import DomainError
from palace.models import AuditEntry, Drawer, DrawerLink
from review import selectors, services
from review.services import ClusterChoice, ItemRef
from tests.review.clusters_data import five_drawers

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL"
    ),
]


def race(*works):
    barrier = threading.Barrier(len(works))

    def one(work):
        try:
            barrier.wait()
            return work()
        except DomainError as error:
            return error.code
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=len(works)) as pool:
        return list(pool.map(one, works))


def test_a_cluster_and_one_of_its_pairs_decided_at_once(dedup_settings, curator, other_curator):
    drawers = five_drawers()
    cluster = selectors.cluster_of(ItemRef.of(DrawerLink.objects.first()))
    choice = ClusterChoice(
        canonical=str(drawers[0].uuid),
        merge=frozenset(str(d.uuid) for d in drawers[1:]),
        distinct=frozenset(),
        shown_links=frozenset(cluster.link_ids),
    )
    pair = f"d{cluster.link_ids[-1]}"
    outcomes = race(
        lambda: services.decide_cluster(cluster=cluster.ref, choice=choice, actor=curator),
        lambda: services.decide(item=pair, action="dismiss", actor=other_curator),
    )
    refused = [o for o in outcomes if isinstance(o, str)]
    assert len(refused) == 1
    assert refused[0] in ("cluster_changed", "already_decided")
    if refused[0] == "already_decided":  # the cluster won: all of it
        assert Drawer.objects.current().count() == 1
        assert AuditEntry.objects.count() == 10
    else:  # the pair won: nothing of the cluster
        assert Drawer.objects.current().count() == 5
        assert AuditEntry.objects.count() == 1
