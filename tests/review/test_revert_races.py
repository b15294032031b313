"""Curators racing to revert one decision (issue 10, item 7), with real threads and real
connections: one revert applies, and every loser hears `already_reverted`, never
`revert_blocked`. On PostgreSQL only, like the other race tests."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections

from dedup.errors import DomainError
from palace.models import AuditEntry
from review import services

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL"
    ),
]

CURATORS = 4
ROUNDS = 8


def race(work):
    barrier = threading.Barrier(CURATORS)

    def one(index):
        try:
            barrier.wait()
            return work(index)
        except DomainError as error:
            return error.code
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=CURATORS) as pool:
        return list(pool.map(one, range(CURATORS)))


@pytest.mark.parametrize("action", ["dismiss", "merge", "delete_link"])
def test_racing_reverts_of_one_decision_lose_with_already_reverted(drawer_link, curator, action):
    item = f"d{drawer_link.pk}"
    for _ in range(ROUNDS):
        entry = services.decide(item=item, action=action, actor=curator)
        outcomes = race(lambda _, pk=entry.pk: services.revert(decision=pk, actor=curator))
        losers = [o for o in outcomes if isinstance(o, str)]
        assert len(outcomes) - len(losers) == 1
        assert set(losers) == {"already_reverted"}
        assert AuditEntry.objects.filter(action="review.revert", target_id=entry.pk).count() == 1
