"""The PostgreSQL candidates function with bounded work per group of words: each group keeps its
newest `p_group_limit` matches (a thirteenth argument), groups that fill it count after the rare
ones in the ranking, and its plans are custom, made at each call for the table as it is (a generic
plan made on an empty table had stayed a scan of a whole index until statistics were refreshed).

It drops every earlier signature before installing this one; the reverse puts back the function of
0003. The SQL is held here as text; dedup/candidates/drawers.py is the live definition, and
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


DROP_SIGNATURES = [
    "DROP FUNCTION IF EXISTS castellan_drawer_candidates"
    "(bigint, bigint, text, bigint, text, text, text[], int, int)",
    "DROP FUNCTION IF EXISTS castellan_drawer_candidates"
    "(bigint, bigint, text, bigint, text, text, text[], bigint, bigint, bigint, int, int)",
    "DROP FUNCTION IF EXISTS castellan_drawer_candidates"
    "(bigint, bigint, text, bigint, text, text, text[], bigint, bigint, bigint, int, int, int)",
]
FUNCTION = """
CREATE OR REPLACE FUNCTION castellan_drawer_candidates(
    p_lock bigint, p_room bigint, p_agent text, p_exclude bigint,
    p_hash text, p_fingerprint text, p_groups text[],
    p_min_length bigint, p_max_length bigint, p_any_length_over bigint,
    p_same_limit int, p_lexical_limit int, p_group_limit int)
RETURNS TABLE (
    part int, id bigint, uuid uuid, content_hash varchar, normalized_content text,
    fingerprint varchar)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_custom_plan
SET enable_seqscan = off
SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    v_group text;
    v_found bigint[];
    v_rare bigint[] := '{}';
    v_common bigint[] := '{}';
BEGIN
    IF p_lock IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(p_lock);
    END IF;
    FOREACH v_group IN ARRAY p_groups LOOP
        v_found := ARRAY(
            SELECT f.id FROM (
                SELECT m.id FROM palace_drawer m
                WHERE to_tsvector('simple'::regconfig, left(m.normalized_content, 100000))
                      @@ to_tsquery('simple'::regconfig, v_group)
                  AND m.room_id + 0 = p_room
                  AND (p_agent IS NULL OR m.agent = p_agent)
                  AND (p_exclude IS NULL OR m.id <> p_exclude)
                  AND (char_length(m.normalized_content) BETWEEN p_min_length AND p_max_length
                       OR char_length(m.normalized_content) > p_any_length_over)
                OFFSET 0
            ) f
            ORDER BY f.id DESC LIMIT p_group_limit);
        IF cardinality(v_found) < p_group_limit THEN
            v_rare := v_rare || v_found;
        ELSE
            v_common := v_common || v_found;
        END IF;
    END LOOP;
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
            SELECT h.id, count(*) FILTER (WHERE h.rare) AS rare, count(*) AS hits
            FROM (
                SELECT r.id, true AS rare FROM unnest(v_rare) AS r(id)
                UNION ALL
                SELECT c.id, false FROM unnest(v_common) AS c(id)
            ) h
            GROUP BY h.id
            ORDER BY rare DESC, hits DESC, h.id DESC
            LIMIT p_lexical_limit
        ) h
        JOIN palace_drawer d ON d.id = h.id
        WHERE d.valid_to IS NULL
        ORDER BY h.rare DESC, h.hits DESC, d.id DESC
    ) x;
END
$$
"""
# The function of migration 0003, which the reverse restores.
PREVIOUS_FUNCTION = """
CREATE OR REPLACE FUNCTION castellan_drawer_candidates(
    p_lock bigint, p_room bigint, p_agent text, p_exclude bigint,
    p_hash text, p_fingerprint text, p_groups text[],
    p_min_length bigint, p_max_length bigint, p_any_length_over bigint,
    p_same_limit int, p_lexical_limit int)
RETURNS TABLE (
    part int, id bigint, uuid uuid, content_hash varchar, normalized_content text,
    fingerprint varchar)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    v_group text;
    v_matches bigint[] := '{}';
BEGIN
    IF p_lock IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(p_lock);
    END IF;
    FOREACH v_group IN ARRAY p_groups LOOP
        v_matches := v_matches || ARRAY(
            SELECT m.id FROM palace_drawer m
            WHERE to_tsvector('simple'::regconfig, left(m.normalized_content, 100000))
                  @@ to_tsquery('simple'::regconfig, v_group)
              AND m.valid_to IS NULL AND m.room_id + 0 = p_room
              AND (p_agent IS NULL OR m.agent = p_agent)
              AND (p_exclude IS NULL OR m.id <> p_exclude)
              AND (char_length(m.normalized_content) BETWEEN p_min_length AND p_max_length
                   OR char_length(m.normalized_content) > p_any_length_over));
    END LOOP;
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
            SELECT h.id, count(*) AS hits FROM unnest(v_matches) AS h(id)
            GROUP BY h.id
            ORDER BY hits DESC, h.id DESC
            LIMIT p_lexical_limit
        ) h
        JOIN palace_drawer d ON d.id = h.id
        ORDER BY h.hits DESC, d.id DESC
    ) x;
END
$$
"""


class Migration(migrations.Migration):
    dependencies = [("dedup", "0004_entity_signatures"), ("palace", "0011_drawer_fulltext_room")]

    operations = [
        RunSQLOn(
            "postgresql",
            [*DROP_SIGNATURES, FUNCTION],
            [*DROP_SIGNATURES, PREVIOUS_FUNCTION],
        )
    ]
