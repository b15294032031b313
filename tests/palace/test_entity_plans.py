"""An entity's page and a mention's answer read the entities merged into it by an index, not by
scanning every entity (palace 0017: the redirects' index is partial). SQLite's ANALYZE counted
the NULLs of a full index as one value matched by every entity, and its planner then scanned."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from palace import selectors
from palace.models import Entity

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's ANALYZE and planner"),
]


def plans(queries) -> list[str]:
    found = []
    with connection.cursor() as cursor:
        for query in queries:
            cursor.execute(f"EXPLAIN QUERY PLAN {query['sql']}")
            found += [row[3] for row in cursor.fetchall()]
    return found


def test_the_entities_merged_into_one_are_read_by_index_after_analyze():
    entities = Entity.objects.bulk_create(
        Entity(name=f"entity {n}", kind="tool", key=f"entity {n}", key_length=8 + len(str(n)))
        for n in range(2_000)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # as a store is analysed before its first merge
    canonical, merged = entities[0], entities[1]
    Entity.objects.filter(pk=merged.pk).update(
        redirect_to=canonical, redirect_kind=Entity.Redirect.MERGE
    )
    with CaptureQueriesContext(connection) as queries:
        shown = selectors.entity_by_uuid(canonical.uuid)
    assert [m.pk for m in shown.merged] == [merged.pk]
    read = plans(queries.captured_queries)
    assert not [step for step in read if step.startswith("SCAN palace_entity")], read


def entities_with_mentions(count: int) -> list[Entity]:
    from dedup import services
    from palace.models import Drawer, Mention

    room = services.room_get_or_create(wing="ops", room="plans")
    drawers = Drawer.objects.bulk_create(
        Drawer(room=room, content=f"drawer {n}", content_hash=f"{n:064x}") for n in range(3)
    )
    entities = Entity.objects.bulk_create(
        Entity(name=f"entity {n}", kind="tool" if n % 2 else "person", key=f"entity {n}")
        for n in range(count)
    )
    Mention.objects.bulk_create(Mention(drawer=d, entity=entities[1]) for d in drawers[:2])
    # Enough mentions that reading them all costs more than the index (entity 3 has none).
    Mention.objects.bulk_create(Mention(drawer=drawers[2], entity=e) for e in entities[4:])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return entities


def test_a_page_of_one_kind_counts_the_mentions_of_its_entities_only():
    """No GROUP BY of every entity of the kind before the page takes its few."""
    entities_with_mentions(2_000)
    page = selectors.entities_search(kind="tool")[:3]
    with CaptureQueriesContext(connection) as queries:
        counted = {entity.name: entity.mention_count for entity in page}
    assert counted == {"entity 1": 2, "entity 3": 0, "entity 5": 1}
    read = plans(queries.captured_queries[:1])
    assert not [step for step in read if "GROUP BY" in step], read


def test_an_entity_s_mentions_are_read_by_their_entity_index():
    entity = entities_with_mentions(2_000)[1]
    mentions = selectors.entity_mentions(entity)
    with CaptureQueriesContext(connection) as queries:
        assert len(list(mentions)) == 2
    read = plans(queries.captured_queries)
    assert not [step for step in read if step.startswith("SCAN palace_mention")], read
