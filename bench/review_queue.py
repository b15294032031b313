#!/usr/bin/env python
"""Review console benchmark: server time and query count of the queue page and an item page at
1,000 / 10,000 / 100,000 open items, on SQLite and PostgreSQL (in-process requests through the
whole Django stack: middleware, session, templates).

    .venv/bin/python bench/review_queue.py [--sizes 1000,10000,100000] [--repeat 15]
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
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


def grow(target: int, present: int, rng, vocabulary) -> None:
    """Add open items up to `target`: nine drawer links for each entity link, like a palace."""
    from dedup import services
    from palace.models import Drawer, DrawerLink, Entity, EntityLink

    room = services.room_get_or_create(wing="bench", room=f"room{rng.randrange(10)}")
    need = target - present
    entity_links = need // 10
    drawer_links = need - entity_links
    drawers = [drawer_row(room, vocabulary.sentence()) for _ in range(drawer_links * 2)]
    drawers = Drawer.objects.bulk_create(drawers, batch_size=2000)
    DrawerLink.objects.bulk_create(
        (
            DrawerLink(
                newer=drawers[2 * i + 1],
                older=drawers[2 * i],
                verdict=rng.choice(["near", "near", "normalized", "exact"]),
                similarity=round(rng.uniform(0.9, 1.0), 4),
                signals={"same_hash": False, "same_fingerprint": False, "threshold": 0.9},
            )
            for i in range(drawer_links)
        ),
        batch_size=2000,
    )
    base = Entity.objects.count()
    entities = Entity.objects.bulk_create(
        (
            Entity(
                name=f"Entity {base + i}", kind="person", key=f"entity {base + i}", key_length=10
            )
            for i in range(entity_links * 2)
        ),
        batch_size=2000,
    )
    EntityLink.objects.bulk_create(
        (
            EntityLink(
                newer=entities[2 * i + 1],
                older=entities[2 * i],
                similarity=round(rng.uniform(0.75, 0.95), 4),
                distance=2,
            )
            for i in range(entity_links)
        ),
        batch_size=2000,
    )


def measure(client, url: str, repeat: int) -> tuple[float, float, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get(url)  # warm caches and templates
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200, (url, response.status_code)
    with CaptureQueriesContext(connection) as captured:
        client.get(url)
    return statistics.median(times) * 1000, max(times) * 1000, len(captured)


def child(backend: str, sizes: list[int], repeat: int) -> None:
    setup_django(fresh_database_url(backend))
    from django.contrib.auth import get_user_model
    from django.test import Client

    from dedup.maintenance import optimize_candidate_indexes
    from palace.models import DrawerLink
    from review.curators import curators_group

    user = get_user_model().objects.create_user("bench")
    user.groups.add(curators_group())
    client = Client()
    client.force_login(user)
    rng = random.Random(3)
    vocabulary = Vocabulary(rng)
    present = 0
    for size in sizes:
        grow(size, present, rng, vocabulary)
        present = size
        optimize_candidate_indexes()
        item = (
            DrawerLink.objects.order_by("-similarity", "-pk").values_list("pk", flat=True).first()
        )
        for label, url in [
            ("queue", "/"),
            ("queue, most uncertain first", "/?order=uncertain"),
            ("queue, page 2", None),
            ("item", f"/items/d{item}/"),
            ("API queue", "/api/review/queue"),
        ]:
            if url is None:
                from review import selectors

                cursor = selectors.queue_page(selectors.QueueFilters()).next_cursor
                url = f"/?cursor={cursor}"
            median, worst, queries = measure(client, url, repeat)
            print(
                json.dumps(
                    {
                        "backend": backend,
                        "size": size,
                        "page": label,
                        "median": median,
                        "worst": worst,
                        "queries": queries,
                    }
                ),
                flush=True,
            )


def main() -> None:
    args = arguments(__doc__, sizes="1000,10000,100000", repeat=15)
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
