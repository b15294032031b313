#!/usr/bin/env python
"""Review console benchmark: server time and query count of the queue page (first, second and a
deep page, filtered), an item page and the API's queue at 1,000 / 100,000 / 1,000,000 open
items, on SQLite and PostgreSQL (in-process requests through the whole Django stack:
middleware, session, templates).

    .venv/bin/python bench/review_queue.py [--sizes 1000,100000,1000000] [--repeat 15]

With --reuse 1 it measures the databases an earlier run filled and left behind (SQLite: the file
named by BENCH_SQLITE_PATH; PostgreSQL: BENCH_POSTGRES_URL, not dropped), filling only what a
size needs beyond the open items already there: the pages measured again after a change
without a 13-minute fill.

The queue is filled by bulk SQL (COPY on PostgreSQL, executemany in big transactions on SQLite)
with exactly the rows the services write: nine drawer links in ten, each between a drawer and a
later one-typo (or case-and-punctuation) variant of it, written as `dedup.services.drawer_write`
writes them (the drawers' hash, normalised text and fingerprint, the full-text rows: SQLite's
triggers fill them, PostgreSQL's GIN index is built after the load; the link's verdict and
signals from `dedup.policy.assess`); one in ten an entity link between two entities of three-word
names two edits apart, as `entity_resolve` writes them (keys, key lengths, signatures, the link's
similarity and distance from `dedup.policy.resolve`). Before the fill each backend checks a few
bulk-made rows against the same texts written through the services, field by field.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import (
    PG_URL,
    arguments,
    fresh_database_url,
    run_children,
    setup_django,
    table,
)
from bench._queue_fill import ROOMS, Texts, check_equivalence, grow

# --- the measures ----------------------------------------------------------------------------


def measure(client, url: str, repeat: int) -> tuple[float, float, float, int]:
    """Wall time (median, worst) and this process's CPU time (median) of a page, in ms, and its
    queries. The CPU time leaves out the database server's (PostgreSQL's is another process)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get(url)  # warm caches and templates
    times, cpu = [], []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        response = client.get(url)
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
        assert response.status_code == 200, (url, response.status_code)
    with CaptureQueriesContext(connection) as captured:
        client.get(url)
    return (
        statistics.median(times) * 1000,
        max(times) * 1000,
        statistics.median(cpu) * 1000,
        len(captured),
    )


def pages(client, size: int) -> list[tuple[str, str]]:
    """The pages measured at this size: the queue's first, second and a middle page (by
    cursor), filtered by room and by rule, most uncertain first, an item, the API's first and
    second page."""
    from palace.models import DrawerLink
    from review import selectors
    from review.selectors.queue import cursor_after

    ordered = DrawerLink.objects.order_by("-similarity", "-pk")
    middle = ordered[int(size * 0.9) // 2]
    first = selectors.queue_page(selectors.QueueFilters())
    api_next = client.get("/api/review/queue").json()["next"]
    return [
        ("queue", "/"),
        ("queue, page 2", f"/?cursor={first.next_cursor}"),
        ("queue, middle page", f"/?cursor={cursor_after(selectors.QueueFilters(), middle)}"),
        ("queue, one room", "/?room=room3"),
        ("queue, rule normalized", "/?rule=normalized"),
        ("queue, most uncertain first", "/?order=uncertain"),
        ("item", f"/items/d{ordered.values_list('pk', flat=True).first()}/"),
        ("API queue", "/api/review/queue"),
        ("API queue, page 2", f"/api/review/queue?cursor={api_next}"),
    ]


def database_url(backend: str, reuse: bool) -> str:
    if not reuse:
        return fresh_database_url(backend)
    if backend == "sqlite":
        return f"sqlite:///{os.environ['BENCH_SQLITE_PATH']}"
    return PG_URL


def child(backend: str, sizes: list[int], repeat: int, reuse: bool) -> None:
    setup_django(database_url(backend, reuse))
    from django.contrib.auth import get_user_model
    from django.test import Client

    from dedup import services
    from dedup.maintenance import optimize_candidate_indexes
    from palace.models import DrawerLink, EntityLink
    from review.curators import curators_group

    user, _ = get_user_model().objects.get_or_create(username="bench")
    user.groups.add(curators_group())
    client = Client()
    client.force_login(user)
    texts = Texts(random.Random(3 + reuse))  # other names than the first fill's
    if not reuse:
        check_equivalence(texts)
    rooms = [services.room_get_or_create(wing="bench", room=f"room{i}").id for i in range(ROOMS)]
    present = DrawerLink.objects.count() + EntityLink.objects.count()
    for size in sizes:
        started = time.perf_counter()
        if size > present:
            grow(size, present, texts, rooms)
            present = size
        optimize_candidate_indexes()
        print(
            f"{backend}: filled {size:,} in {time.perf_counter() - started:.0f} s", file=sys.stderr
        )
        for label, url in pages(client, size):
            median, worst, cpu, queries = measure(client, url, repeat)
            row = {"backend": backend, "size": size, "page": label}
            row |= {"median": median, "worst": worst, "cpu": cpu, "queries": queries}
            print(json.dumps(row), flush=True)


def main() -> None:
    args = arguments(__doc__, sizes="1000,100000,1000000", repeat=15, reuse=0)
    if args.child:
        child(args.child, args.sizes, args.repeat, bool(args.reuse))
        return
    rows = [
        [
            r["backend"],
            f"{r['size']:,}",
            r["page"],
            f"{r['median']:.1f}",
            f"{r['worst']:.1f}",
            f"{r['cpu']:.1f}",
            r["queries"],
        ]
        for r in run_children(__file__, args.backends)
    ]
    headers = ["backend", "open items", "page", "median ms", "worst ms", "CPU ms", "queries"]
    print(table(headers, rows))


if __name__ == "__main__":
    main()
