"""Castellan's own metrics: what the services wrote, counted where they write it.

The services call these functions with results they already hold, after the transaction commits
(`transaction.on_commit`), so a write that rolls back counts nothing and no query is added. The
counters are prometheus-client's, multiprocess-safe when `PROMETHEUS_MULTIPROC_DIR` is set (the
gunicorn config sets it); `/metrics` (config/metrics.py) exposes them.

Each committed write is also tallied for the request that made it (`request_tallies`), so the
request's log line can carry its verdict counts.
"""

from __future__ import annotations

from collections import Counter as Tally
from contextvars import ContextVar

from django.db import transaction
from prometheus_client import Counter

DRAWER_WRITES = Counter(
    "castellan_drawer_writes",
    "Drawer writes by verdict: exact (a copy, not stored), normalized or near (stored and "
    "linked), new (stored, no link), replay (an id or named write already stored).",
    ["verdict"],
)
ENTITY_SIGHTINGS = Counter(
    "castellan_entity_resolutions",
    "Entity names resolved, by the rule that settled them (distinct: a new entity).",
    ["rule"],
)
DECISIONS = Counter(
    "castellan_review_decisions",
    "Review decisions recorded, by action.",
    ["action"],
)

_request_tally: ContextVar[Tally[str] | None] = ContextVar("castellan_request_tally", default=None)


def request_tally_start() -> Tally[str]:
    """Start counting the verdicts of the current request's writes; returns the tally."""
    tally: Tally[str] = Tally()
    _request_tally.set(tally)
    return tally


def request_tally_stop() -> None:
    _request_tally.set(None)


def _count(counter: Counter, label: str, tally_key: str) -> None:
    tally = _request_tally.get()
    # A verdict may come as the policy's StrEnum (`Verdict.EXACT`): the tally keeps its plain
    # value, so the request's log line reads {'exact': 1} as it reads {'new': 1}.
    tally_key = str(tally_key)

    def record() -> None:
        counter.labels(label).inc()
        if tally is not None:
            tally[tally_key] += 1

    transaction.on_commit(record)


def drawer_written(verdict: str) -> None:
    _count(DRAWER_WRITES, verdict, verdict)


def entity_resolved(rule: str) -> None:
    _count(ENTITY_SIGHTINGS, rule, f"entity_{rule}")


def decision_recorded(action: str) -> None:
    _count(DECISIONS, action, f"decision_{action}")
