"""The entities a key of some wings is told of are read by index on PostgreSQL: a page probes its
entities' mentions by their entity index, and never reads every mention of the key's wings. An OR
of two EXISTS in the filter (the entity's own mentions, and those of the entities redirected into
it), or one EXISTS in the select list (is `redirect_to` one the key is told of?), was planned as a
hash of every mention of the wings: 0.1 to 0.9 s a page at 200,000 mentions."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dedup import services
from palace import selectors
from palace.models import Drawer, Entity, EntityLink, Mention

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner"),
]
ENTITIES = 20_000


@pytest.fixture
def store() -> list[Entity]:
    """Entities of one mention each, one in a hundred in wing alpha, the rest in beta; the first
    settled into the second, and linked to the next three."""
    rooms = [services.room_get_or_create(wing=wing, room="r") for wing in ("alpha", "beta")]
    drawers = Drawer.objects.bulk_create(
        Drawer(room=rooms[n % 100 != 0], content=f"d{n}", content_hash=f"{n:064x}")
        for n in range(ENTITIES)
    )
    entities = Entity.objects.bulk_create(
        Entity(name=f"entity {n}", kind="tool", key=f"entity {n}", key_length=10)
        for n in range(ENTITIES)
    )
    Mention.objects.bulk_create(
        Mention(drawer=d, entity=e) for d, e in zip(drawers, entities, strict=True)
    )
    Entity.objects.filter(pk=entities[0].pk).update(redirect_to=entities[1], redirect_kind="alias")
    EntityLink.objects.bulk_create(
        EntityLink(newer=entities[n], older=entities[0], similarity=0.8) for n in (1, 2, 3)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return entities


def plan(sql: str, params=()) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}", params)
        return [row[0] for row in cursor.fetchall()]


def reads_every_mention(steps: list[str]) -> list[str]:
    return [s for s in steps if "hashed SubPlan" in s or "Seq Scan on palace_mention" in s]


@pytest.mark.parametrize("wing", ["alpha", "beta"])
def test_a_page_of_the_list_probes_its_entities_mentions(store, wing):
    page = selectors.entities_search(wings=[wing])[:51]
    steps = plan(*page.query.sql_with_params())
    assert reads_every_mention(steps) == [], "\n".join(steps)


def test_the_candidates_sides_are_probed(store):
    with CaptureQueriesContext(connection) as queries:
        found = selectors.entity_candidates(store[0], ["beta"])
    assert len(found) == 3
    steps = [step for query in queries.captured_queries for step in plan(query["sql"])]
    assert reads_every_mention(steps) == [], "\n".join(steps)
