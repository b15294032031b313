#!/usr/bin/env python
"""Clusters benchmark: server time and query count of the queue's cluster view, one cluster's
page and the API's cluster list, at 1,000 / 10,000 / 100,000 open items (pairs, as in
bench/review_queue.py, plus 100 clusters of five drawers), on SQLite and PostgreSQL.

    .venv/bin/python bench/clusters.py [--sizes 1000,10000,100000] [--repeat 9]
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import (
    Vocabulary,
    arguments,
    drawer_row,
    fresh_database_url,
    run_children,
    setup_django,
    table,
)
from bench._queue_fill import ROOMS, Texts, grow
from bench.review_queue import measure

CLUSTERS = 100
MEMBERS = 5


def add_clusters(rng, vocabulary) -> int:
    """`CLUSTERS` chains of `MEMBERS` drawers in one room; the first cluster's name."""
    from dedup import services
    from palace.models import Drawer, DrawerLink

    room = services.room_get_or_create(wing="bench", room="clusters")
    drawers = Drawer.objects.bulk_create(
        [drawer_row(room, vocabulary.sentence()) for _ in range(CLUSTERS * MEMBERS)]
    )
    links = DrawerLink.objects.bulk_create(
        DrawerLink(
            older=drawers[c * MEMBERS + m],
            newer=drawers[c * MEMBERS + m + 1],
            verdict="near",
            similarity=round(rng.uniform(0.9, 1.0), 4),
            signals={"threshold": 0.9},
        )
        for c in range(CLUSTERS)
        for m in range(MEMBERS - 1)
    )
    return min(link.pk for link in links)


def child(backend: str, sizes: list[int], repeat: int) -> None:
    setup_django(fresh_database_url(backend))
    from django.contrib.auth import get_user_model
    from django.test import Client

    from dedup import services
    from review.curators import curators_group

    user = get_user_model().objects.create_user("bench")
    user.groups.add(curators_group())
    client = Client()
    client.force_login(user)
    rng = random.Random(3)
    vocabulary = Vocabulary(rng)
    first = add_clusters(rng, vocabulary)
    present = CLUSTERS * (MEMBERS - 1)
    texts = Texts(rng)
    rooms = [services.room_get_or_create(wing="bench", room=f"room{i}").id for i in range(ROOMS)]
    for size in sizes:
        grow(size, present, texts, rooms)
        present = size
        for label, url in [
            ("queue, type=cluster", "/?type=cluster"),
            ("one cluster", f"/clusters/d{first}/"),
            ("API clusters", "/api/review/clusters"),
        ]:
            median, worst, _, queries = measure(client, url, repeat)
            row = {"backend": backend, "size": size, "page": label}
            print(json.dumps(row | {"median": median, "worst": worst, "queries": queries}))


def main() -> None:
    args = arguments(__doc__, sizes="1000,10000,100000", repeat=9)
    if args.child:
        child(args.child, args.sizes, args.repeat)
        return
    rows = [
        [
            r["backend"],
            f"{r['size']:,}",
            r["page"],
            f"{r['median']:.1f}",
            f"{r['worst']:.1f}",
            r["queries"],
        ]
        for r in run_children(__file__, args.backends)
    ]
    print(table(["backend", "open items", "page", "median ms", "worst ms", "queries"], rows))


if __name__ == "__main__":
    main()
