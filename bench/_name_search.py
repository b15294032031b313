"""`?name=` measured for bench/entities.py: a page from the trigram indexes (palace 0018) against
the scan it replaced, alternating, in the store the benchmark filled."""

from __future__ import annotations

import random
import statistics
import time

SEARCHES = ["name indexed", "name scan", "piece indexed", "piece scan"]


def name_searches(rng: random.Random, count: int, rounds: int) -> dict[str, float]:
    """A page of `?name=` (its first 50 entities, with their aliases and counts) for a random
    entity's whole name (a rare text: few entities hold it) and for a piece of five characters
    of one (here a common one: the names are made of a few dozen syllables), from the trigram
    indexes and by the scan it replaced (the query before palace 0018: `icontains` on the name
    OR an alias), alternating; median ms each."""
    from django.db.models import Q

    from palace import selectors
    from palace.models import Entity, EntityAlias

    def scanned(text: str) -> list:
        aliases = EntityAlias.objects.filter(alias__icontains=text).values("entity_id")
        matching = Q(name__icontains=text) | Q(id__in=aliases)
        return list(selectors.entities_with_aliases().filter(matching).order_by("id")[:50])

    def indexed(text: str) -> list:
        return list(selectors.entities_search(name=text)[:50])

    times: dict[str, list[float]] = {}
    for _ in range(rounds):
        name = Entity.objects.values_list("name", flat=True).get(pk=rng.randint(1, count))
        start = rng.randint(0, max(len(name) - 5, 0))
        for text, label in ((name, "name"), (name[start : start + 5], "piece")):
            searches = [("indexed", indexed), ("scan", scanned)]
            rng.shuffle(searches)
            pages = []
            for how, search in searches:
                started = time.perf_counter()
                pages.append([entity.pk for entity in search(text)])
                times.setdefault(f"{label} {how}", []).append(time.perf_counter() - started)
            assert pages[0] == pages[1], text  # the same page either way
    return {label: statistics.median(spent) * 1000 for label, spent in times.items()}
