"""docs/scaling.md's partitioning claim, checked in plain PostgreSQL: with the drawer table hash-
partitioned by room, every room-scoped candidate lookup (the statements of the write path's
candidate function, for one room) reads one partition of eight, with the literal room and with the
generic plan the function keeps (pruned when the plan starts)."""

import re

import pytest
from django.db import connection

from dedup import services as write
from dedup.services import DedupConfig
from palace import fulltext
from palace.models import Drawer

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.postgres_only,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="partitioning is PostgreSQL's"),
]
OFF = DedupConfig(enabled=False, near_threshold=0.9, entity_fuzzy=False)
PARTITIONS = 8
TABLE = "scale_drawer_by_room"
DOCUMENT = fulltext.postgresql_document("m")
# The shapes of the candidate function's statements (dedup/candidates/drawer_function.py), for one
# room: a word group's lookup names its room only in its terms (the words' terms in the room).
TERMS = (
    f"SELECT m.id FROM {TABLE} m WHERE {DOCUMENT} @@ {fulltext.postgresql_query('%s')} "
    "AND m.valid_to IS NULL AND (char_length(m.normalized_content) BETWEEN 0 AND 1000000)"
)
# On a partitioned table the function's lookup adds the column (pruning) beside its terms
# (docs/scaling.md).
LEXICAL = f"{TERMS} AND m.room_id = {{room}}"
SAME = (
    f"SELECT m.id FROM {TABLE} m WHERE m.room_id = {{room}} AND m.valid_to IS NULL "
    "AND m.content_hash = %s"
)


@pytest.fixture
def partitioned():
    """Drawers of 16 rooms written through the write path, copied into a drawer table
    partitioned by hash of room_id (its primary key includes the partition column)."""
    for number in range(16):
        room = write.room_get_or_create(wing="w", room=f"room-{number}")
        for line in range(3):
            write.drawer_write(
                room=room,
                content=f"Runbook {number} line {line}: restart the ingest worker gently.",
                mode=write.WriteMode.MINED,
                config=OFF,
            )
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE {TABLE} (LIKE palace_drawer INCLUDING DEFAULTS) "
            "PARTITION BY HASH (room_id)"
        )
        cursor.execute(f"ALTER TABLE {TABLE} ADD PRIMARY KEY (room_id, id)")
        for remainder in range(PARTITIONS):
            cursor.execute(
                f"CREATE TABLE {TABLE}_{remainder} PARTITION OF {TABLE} "
                f"FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {remainder})"
            )
        cursor.execute(f"CREATE INDEX ON {TABLE} USING gin ({fulltext.postgresql_document()})")
        cursor.execute(f"CREATE INDEX ON {TABLE} (room_id, content_hash)")
        cursor.execute(f"INSERT INTO {TABLE} SELECT * FROM palace_drawer")
        cursor.execute(f"ANALYZE {TABLE}")
    return Drawer.objects.order_by("pk").first()


def partitions_read(plan: str) -> set[str]:
    return set(re.findall(rf"\b{TABLE}_\d+\b", plan))


def explain(sql: str, params: list) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (COSTS OFF) {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


def explain_generic(sql: str, params: list, room: int) -> str:
    """The plan the candidate function keeps (generic, the room a parameter), as executed."""
    statement = sql.replace("{room}", "$1")
    for index in range(len(params)):
        statement = statement.replace("%s", f"${index + 2}", 1)
    types = ", ".join(["bigint"] + ["text"] * len(params))
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute(f"PREPARE candidates ({types}) AS {statement}")
        values = ", ".join(["%s"] * (len(params) + 1))
        cursor.execute(
            f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE candidates ({values})",
            [room, *params],
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("DEALLOCATE candidates")
    return plan


def test_the_table_spreads_rooms_over_every_partition(partitioned):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(DISTINCT tableoid) FROM {TABLE}")
        assert cursor.fetchone()[0] > 1


def words(room: int) -> str:
    return fulltext.postgresql_match(["ingest", "worker"], room=room)


@pytest.mark.parametrize("sql", [LEXICAL, SAME])
def test_a_room_scoped_lookup_reads_one_partition(partitioned, sql):
    plan = explain(sql.replace("{room}", str(partitioned.room_id)), [words(partitioned.room_id)])
    assert len(partitions_read(plan)) == 1


@pytest.mark.parametrize("sql", [LEXICAL, SAME])
def test_the_generic_plan_prunes_to_one_partition_when_it_runs(partitioned, sql):
    plan = explain_generic(sql, [words(partitioned.room_id)], partitioned.room_id)
    assert f"Subplans Removed: {PARTITIONS - 1}" in plan


def test_a_room_only_in_the_terms_reads_every_partition(partitioned):
    """Why a partitioned store needs `room_id = p_room` beside today's terms of the room (the
    full-text index's keys, which name the room inside each lexeme): pruning needs the column."""
    plan = explain(TERMS, [words(partitioned.room_id)])
    assert len(partitions_read(plan)) == PARTITIONS


def test_the_terms_find_the_room_s_drawers_in_the_partitioned_table(partitioned):
    with connection.cursor() as cursor:
        cursor.execute(
            LEXICAL.replace("{room}", str(partitioned.room_id)), [words(partitioned.room_id)]
        )
        found = {row[0] for row in cursor.fetchall()}
    expected = set(Drawer.objects.filter(room_id=partitioned.room_id).values_list("pk", flat=True))
    assert found == expected
