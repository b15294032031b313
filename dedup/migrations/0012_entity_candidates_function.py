"""The PostgreSQL function `castellan_entity_candidates`: a sighted name's entity lock, its exact
lookups and, when they find nothing, its signature lookup, in one call (one round trip instead of
four: the lock, the exact lookups, `SET LOCAL jit = off` and the signature lookup). SQLite needs
none. The reverse drops it; the code of the release before made those four statements itself.

The SQL is held here as text; dedup/candidates/entity_function.py is the live definition, and
tests/dedup/test_migrations.py checks that the installed function is it.
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


FUNCTION = """
CREATE OR REPLACE FUNCTION castellan_entity_candidates(
    p_lock bigint, p_name text, p_key text, p_kind text,
    p_signatures bigint[], p_min_length bigint, p_max_length bigint)
RETURNS TABLE (
    part int, id bigint, uuid uuid, name varchar, kind varchar, key varchar, key_length int,
    redirect_to_id bigint, redirect_kind varchar, created_at timestamptz, known_alias varchar)
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
    SELECT 0, e.id, e.uuid, e.name, e.kind, e.key, e.key_length, e.redirect_to_id,
           e.redirect_kind, e.created_at, a.alias
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
    SELECT 1, s.entity_id,
           NULL::uuid, NULL::varchar, NULL::varchar, s.key, NULL::int,
           NULL::bigint, NULL::varchar, NULL::timestamptz, NULL::varchar
    FROM unnest(p_signatures) AS asked(signature)
    CROSS JOIN LATERAL (
        SELECT s.entity_id, s.key FROM palace_entitysignature s
        WHERE s.signature BETWEEN asked.signature + p_min_length
                              AND asked.signature + p_max_length
        OFFSET 0
    ) s
    UNION ALL
    SELECT 2, s.alias_id,
           NULL::uuid, NULL::varchar, NULL::varchar, s.key, NULL::int,
           NULL::bigint, NULL::varchar, NULL::timestamptz, NULL::varchar
    FROM unnest(p_signatures) AS asked(signature)
    CROSS JOIN LATERAL (
        SELECT s.alias_id, s.key FROM palace_entityaliassignature s
        WHERE s.signature BETWEEN asked.signature + p_min_length
                              AND asked.signature + p_max_length
        OFFSET 0
    ) s;
END
$$
"""
REMOVE = (
    "DROP FUNCTION IF EXISTS castellan_entity_candidates"
    "(bigint, text, text, text, bigint[], bigint, bigint)"
)


class Migration(migrations.Migration):
    dependencies = [("dedup", "0011_entity_signatures_carry_lengths")]

    operations = [RunSQLOn("postgresql", [FUNCTION], [REMOVE])]
