"""The PostgreSQL function `castellan_entity_lookup`, which a mention's resolution calls from this
release on: `castellan_entity_candidates` (0012) whose signature lookup also reads the entities
within reach. When the exact lookups find nothing, it returns the entities (of the kind, not
redirected) that store a signature asked, and the aliases a person recorded that do with their
entity, if the key is within Levenshtein four of the name's (OSA within two is within it),
instead of the (owner, key) pairs for a second statement to read by primary key. The bound is
`fuzzystrmatch`'s `levenshtein_less_equal` (a trusted extension: the database owner may create
it). SQLite: nothing.

The function gets a name of its own, and 0012's is left as it is, because its rows changed
shape: processes of the release before, still serving while this migration runs, go on calling
0012's function and reading what they expect (under the same advisory lock). A later release
drops it. The reverse drops the new function and the extension (if something else in the
database uses the extension, PostgreSQL refuses to drop it, and the reverse fails saying so).

A migration is history: this file holds the SQL it ran, as text, and imports no project code.
dedup/candidates/entity_function.py is today's definition; tests/dedup/test_migrations.py checks
that this migration installs it.
"""

from django.db import migrations


class RunSQLOn(migrations.RunSQL):
    """RunSQL on one database vendor only: the other has its own statements or needs none."""

    def __init__(self, vendor, sql, reverse_sql):
        super().__init__(sql, reverse_sql, elidable=False)
        self.vendor = vendor

    def deconstruct(self):
        return (self.__class__.__name__, [self.vendor, self.sql, self.reverse_sql], {})

    def _run_sql(self, schema_editor, sqls):
        if schema_editor.connection.vendor == self.vendor:
            super()._run_sql(schema_editor, sqls)


# As django.contrib.postgres's CreateExtension, whose reverse would query pg_extension on SQLite.
EXTENSION = "CREATE EXTENSION IF NOT EXISTS fuzzystrmatch"
EXTENSION_REMOVE = "DROP EXTENSION IF EXISTS fuzzystrmatch"
REMOVE = (
    "DROP FUNCTION IF EXISTS castellan_entity_lookup"
    "(bigint, text, text, text, bigint[], bigint, bigint)"
)
FUNCTION = """
CREATE OR REPLACE FUNCTION castellan_entity_lookup(
    p_lock bigint, p_name text, p_key text, p_kind text,
    p_signatures bigint[], p_min_length bigint, p_max_length bigint)
RETURNS TABLE (
    part int, id bigint, uuid uuid, name varchar, kind varchar, key varchar, key_length int,
    redirect_to_id bigint, redirect_kind varchar, created_at timestamptz, known_alias varchar,
    known_key varchar)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET max_parallel_workers_per_gather = 0
SET jit = off
AS $$
#variable_conflict use_column
BEGIN
    IF p_lock IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(p_lock);
    END IF;
    RETURN QUERY
    SELECT 0, e.id, e.uuid, e.name, e.kind, e.key, e.key_length, e.redirect_to_id, e.redirect_kind, e.created_at, a.alias, NULL::varchar
    FROM (
        SELECT n.id FROM palace_entity n WHERE n.name = p_name
        UNION SELECT k.id FROM palace_entity k WHERE k.key = p_key
        UNION SELECT ak.entity_id FROM palace_entityalias ak WHERE ak.key = p_key
    ) m
    CROSS JOIN LATERAL (
        SELECT * FROM palace_entity e
        WHERE e.id = m.id AND (p_kind IS NULL OR e.kind = p_kind)
        OFFSET 0
    ) e
    LEFT JOIN LATERAL (
        SELECT a.id, a.alias FROM palace_entityalias a WHERE a.entity_id = e.id OFFSET 0
    ) a ON true
    ORDER BY e.id, a.id;
    IF FOUND OR p_signatures IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT 1, e.id, e.uuid, e.name, e.kind, e.key, e.key_length, e.redirect_to_id, e.redirect_kind, e.created_at, NULL::varchar, NULL::varchar
    FROM (
        SELECT DISTINCT s.entity_id AS owner, s.key
        FROM unnest(p_signatures) AS asked(signature)
        CROSS JOIN LATERAL (
            SELECT s.entity_id, s.key FROM palace_entitysignature s
            WHERE s.signature BETWEEN asked.signature + p_min_length
                                  AND asked.signature + p_max_length
            OFFSET 0
        ) s
        OFFSET 0
    ) o
    CROSS JOIN LATERAL (
        SELECT * FROM palace_entity e
        WHERE e.id = o.owner AND e.redirect_to_id IS NULL AND (p_kind IS NULL OR e.kind = p_kind)
        OFFSET 0
    ) e
    WHERE levenshtein_less_equal(o.key, p_key, 4) <= 4
    UNION ALL
    SELECT 2, e.id, e.uuid, e.name, e.kind, e.key, e.key_length, e.redirect_to_id, e.redirect_kind, e.created_at, a.alias, a.key
    FROM (
        SELECT DISTINCT s.alias_id AS owner, s.key
        FROM unnest(p_signatures) AS asked(signature)
        CROSS JOIN LATERAL (
            SELECT s.alias_id, s.key FROM palace_entityaliassignature s
            WHERE s.signature BETWEEN asked.signature + p_min_length
                                  AND asked.signature + p_max_length
            OFFSET 0
        ) s
        OFFSET 0
    ) o
    CROSS JOIN LATERAL (
        SELECT a.entity_id, a.alias, a.key FROM palace_entityalias a
        WHERE a.id = o.owner AND a.source IN ('api', 'curator')
        OFFSET 0
    ) a
    CROSS JOIN LATERAL (
        SELECT * FROM palace_entity e
        WHERE e.id = a.entity_id AND e.redirect_to_id IS NULL AND (p_kind IS NULL OR e.kind = p_kind)
        OFFSET 0
    ) e
    WHERE levenshtein_less_equal(o.key, p_key, 4) <= 4;
END
$$
"""


class Migration(migrations.Migration):
    dependencies = [("dedup", "0012_entity_candidates_function")]

    operations = [
        RunSQLOn(
            "postgresql",
            [EXTENSION, FUNCTION],
            [REMOVE, EXTENSION_REMOVE],
        )
    ]
