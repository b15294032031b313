"""Decisions, reverts and cluster decisions racing a DELETE of one of their drawers, and a revert
racing a new merge into the same kept drawer, with real threads and connections (PostgreSQL only,
like the other race tests). Every writer takes the drawers (by id) before the links they lead to
(dedup/locks.py), so none deadlocks, none fails at commit on a foreign key (a 500), and a revert
judges the decisions that landed before it held their drawers."""

import pytest
from django.db import connection

from dedup import services as write
from palace.models import Drawer, DrawerLink
from review import selectors, services
from review.services import ClusterChoice, ItemRef
from tests.races import race_codes as race
from tests.review.clusters_data import RESTATEMENTS

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL"
    ),
]

ROUNDS = 12
BASE = "The backup job {} runs every night at two and writes to the cold storage bucket."


def drawers(round_: int, texts: list[str]) -> list[Drawer]:
    room = write.room_get_or_create(wing="locks", room=f"r{round_}")
    return [write.drawer_write(room=room, content=text).drawer for text in texts]


def three(round_: int) -> tuple[list[Drawer], dict[frozenset[int], int]]:
    """Three restatements, each linked to the older ones; the links by their two drawers."""
    base = BASE.format(round_)
    made = drawers(round_, [base, base.replace("bucket", "bukcet"), base.replace("night", "nihgt")])
    links = {
        frozenset((link.older_id, link.newer_id)): link.pk
        for link in DrawerLink.objects.filter(older__in=made)
    }
    return made, links


def pair(round_: int) -> tuple[Drawer, Drawer, str]:
    (older, newer, _), links = three(round_)
    return older, newer, f"d{links[frozenset((older.pk, newer.pk))]}"


def test_a_merge_decision_racing_the_delete_of_its_kept_drawer(dedup_settings, curator):
    for round_ in range(ROUNDS):
        older, _, item = pair(round_)
        outcomes = race(
            lambda item=item: services.decide(item=item, action="merge", actor=curator),
            lambda older=older: write.drawer_delete(drawer=older),
        )
        assert outcomes[1] == "ok", round_
        assert outcomes[0] in ("ok", "already_decided", "item_not_found"), round_


@pytest.mark.parametrize(
    ("action", "victim", "answers"),
    [
        ("delete_link", 0, ("ok", "revert_target_deleted")),
        ("merge", 1, ("ok", "revert_target_deleted")),
        ("dismiss", 1, ("ok", "revert_target_deleted")),
    ],
)
def test_a_revert_racing_the_delete_of_one_of_its_drawers(
    dedup_settings, curator, action, victim, answers
):
    for round_ in range(ROUNDS):
        older, newer, item = pair(round_)
        entry = services.decide(item=item, action=action, actor=curator)
        gone = (older, newer)[victim]
        outcomes = race(
            lambda pk=entry.pk: services.revert(decision=pk, actor=curator),
            lambda gone=gone: write.drawer_delete(drawer=gone),
        )
        assert outcomes[1] == "ok", round_
        assert outcomes[0] in answers, round_
        assert not DrawerLink.objects.filter(pk=ItemRef.parse(item).pk).exists(), round_


def test_a_cluster_decision_racing_the_delete_of_a_member(dedup_settings, curator):
    for round_ in range(ROUNDS):
        members = drawers(round_, [f"Round {round_}: {text}" for text in RESTATEMENTS])
        cluster = selectors.cluster_of(ItemRef.of(DrawerLink.objects.filter(older=members[0])[0]))
        choice = ClusterChoice(
            canonical=str(members[0].uuid),
            merge=frozenset(str(d.uuid) for d in members[1:]),
            distinct=frozenset(),
            shown_links=frozenset(cluster.link_ids),
        )
        outcomes = race(
            lambda c=cluster, ch=choice: services.decide_cluster(
                cluster=c.ref, choice=ch, actor=curator
            ),
            lambda gone=members[2]: write.drawer_delete(drawer=gone),
        )
        assert outcomes[1] == "ok", round_
        assert outcomes[0] in ("ok", "cluster_changed"), round_


def test_a_revert_of_a_merge_sees_a_merge_into_the_same_drawer_landing_meanwhile(
    dedup_settings, curator, other_curator
):
    for round_ in range(ROUNDS):
        (kept, first, second), links = three(round_)
        merged = services.decide(
            item=f"d{links[frozenset((kept.pk, first.pk))]}", action="merge", actor=curator
        )
        outcomes = race(
            lambda pk=merged.pk: services.revert(decision=pk, actor=curator),
            lambda pk=links[frozenset((kept.pk, second.pk))]: services.decide(
                item=f"d{pk}", action="merge", actor=other_curator
            ),
        )
        assert outcomes[1] == "ok", round_
        assert outcomes[0] in ("ok", "revert_blocked"), round_
        kept.refresh_from_db()
        sources = {s["drawer"] for s in kept.consolidation.get("sources", [])}
        assert str(second.uuid) in sources, round_
        assert (str(first.uuid) in sources) == (outcomes[0] == "revert_blocked"), round_
