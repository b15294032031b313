"""The PostgreSQL function a write's candidates come from, as first written (commit c38d5a9).

A migration is history: this file holds the SQL it ran, as text, and imports no project code.
Later versions of the function are installed by later migrations (0003); dedup/candidates.py is
today's definition, and tests/dedup/test_migrations.py checks that migrating installs it.
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
CREATE OR REPLACE FUNCTION castellan_drawer_candidates(
    p_lock bigint, p_room bigint, p_agent text, p_exclude bigint,
    p_hash text, p_fingerprint text, p_groups text[], p_same_limit int, p_lexical_limit int)
RETURNS TABLE (
    part int, id bigint, uuid uuid, content_hash varchar, normalized_content text,
    fingerprint varchar)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET max_parallel_workers_per_gather = 0
AS $$
BEGIN
    IF p_lock IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(p_lock);
    END IF;
    RETURN QUERY
    SELECT 0, s.* FROM (
        SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
        FROM palace_drawer d
        WHERE d.room_id = p_room AND d.valid_to IS NULL AND d.content_hash = p_hash
          AND (p_agent IS NULL OR d.agent = p_agent) AND (p_exclude IS NULL OR d.id <> p_exclude)
        UNION
        SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
        FROM palace_drawer d
        WHERE d.room_id = p_room AND d.valid_to IS NULL AND d.fingerprint = p_fingerprint
          AND (p_agent IS NULL OR d.agent = p_agent) AND (p_exclude IS NULL OR d.id <> p_exclude)
        ORDER BY 1 LIMIT p_same_limit
    ) s
    UNION ALL
    SELECT 1, x.* FROM (
        SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
        FROM (
            SELECT g.id, count(*) AS hits
            FROM unnest(p_groups) AS q(query)
            CROSS JOIN LATERAL (
                SELECT m.id FROM palace_drawer m
                WHERE to_tsvector('simple'::regconfig, left(m.normalized_content, 100000))
                      @@ to_tsquery('simple'::regconfig, q.query)
                  AND m.valid_to IS NULL AND m.room_id = p_room
                  AND (p_agent IS NULL OR m.agent = p_agent)
                  AND (p_exclude IS NULL OR m.id <> p_exclude)
            ) g
            GROUP BY g.id
            ORDER BY hits DESC, g.id DESC
            LIMIT p_lexical_limit
        ) h
        JOIN palace_drawer d ON d.id = h.id
        ORDER BY h.hits DESC, d.id DESC
    ) x;
END
$$
"""
DROP_FUNCTION = "DROP FUNCTION IF EXISTS castellan_drawer_candidates(bigint, bigint, text, bigint, text, text, text[], int, int)"


class Migration(migrations.Migration):
    dependencies = [("dedup", "0001_dedup_keys"), ("palace", "0003_review_decisions")]

    operations = [RunSQLOn("postgresql", [FUNCTION], [DROP_FUNCTION])]
