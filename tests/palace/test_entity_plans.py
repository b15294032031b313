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
