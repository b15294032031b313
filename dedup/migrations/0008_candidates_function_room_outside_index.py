"""The PostgreSQL candidates function with a choice of where a word group's lookup matches the
room (`p_room_in_index`, a new last argument): inside the full-text index (the room's key ANDed
with the words', as in 0006) or, for a room that is most of the store, after it (`room_id -
p_room = 0`, which no index serves): there the room's key is nearly every posting of the index,
and reading it cost 296 GIN pages (14.7 ms warm) to keep 48 matches in one room of 1M drawers.
Both find the same drawers.

The reverse puts back the function of 0006. The SQL is held here as text;
dedup/candidates/drawers.py is the live definition, and tests/dedup/test_migrations.py checks
that the installed function is it.
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
    "(bigint, bigint, text, bigint, text, text, text[], bigint, bigint, bigint, int, int, int)",
    "DROP FUNCTION IF EXISTS castellan_drawer_candidates"
    "(bigint, bigint, text, bigint, text, text, text[], bigint, bigint, bigint, int, int, int, "
    "boolean)",
]
FUNCTION = """
CREATE OR REPLACE FUNCTION castellan_drawer_candidates(
    p_lock bigint, p_room bigint, p_agent text, p_exclude bigint,
    p_hash text, p_fingerprint text, p_groups text[],
    p_min_length bigint, p_max_length bigint, p_any_length_over bigint,
    p_same_limit int, p_lexical_limit int, p_group_limit int, p_room_in_index boolean)
RETURNS TABLE (
    part int, id bigint, uuid uuid, content_hash varchar, normalized_content text,
    fingerprint varchar)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
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
        IF p_room_in_index THEN
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
        ELSE
            v_found := ARRAY(
            SELECT f.id FROM (
                SELECT m.id FROM palace_drawer m
                WHERE to_tsvector('simple'::regconfig, left(m.normalized_content, 100000))
                      @@ to_tsquery('simple'::regconfig, v_group)
                  AND m.room_id - p_room = 0
                  AND (p_agent IS NULL OR m.agent = p_agent)
                  AND (p_exclude IS NULL OR m.id <> p_exclude)
                  AND (char_length(m.normalized_content) BETWEEN p_min_length AND p_max_length
                       OR char_length(m.normalized_content) > p_any_length_over)
                OFFSET 0
            ) f
            ORDER BY f.id DESC LIMIT p_group_limit);
        END IF;
        IF cardinality(v_found) < p_group_limit THEN
            v_rare := v_rare || v_found;
        ELSE
            v_common := v_common || v_found;
        END IF;
    END LOOP;
    RETURN QUERY EXECUTE $q$
    SELECT 0, s.* FROM (
        SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
        FROM palace_drawer d
        WHERE d.room_id = $1 AND d.valid_to IS NULL AND d.content_hash = $4
          AND ($2 IS NULL OR d.agent = $2) AND ($3 IS NULL OR d.id <> $3)
        UNION
        SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
        FROM palace_drawer d
        WHERE d.room_id = $1 AND d.valid_to IS NULL AND d.fingerprint = $5
          AND ($2 IS NULL OR d.agent = $2) AND ($3 IS NULL OR d.id <> $3)
        ORDER BY 1 LIMIT $6
    ) s
    UNION ALL
    SELECT 1, x.* FROM (
        SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
        FROM (
            SELECT h.id, count(*) FILTER (WHERE h.rare) AS rare, count(*) AS hits
            FROM (
                SELECT r.id, true AS rare FROM unnest($7) AS r(id)
                UNION ALL
                SELECT c.id, false FROM unnest($8) AS c(id)
            ) h
            GROUP BY h.id
            ORDER BY rare DESC, hits DESC, h.id DESC
            LIMIT $9
        ) h
        JOIN palace_drawer d ON d.id = h.id
        WHERE d.valid_to IS NULL
        ORDER BY h.rare DESC, h.hits DESC, d.id DESC
    ) x
    $q$
    USING p_room, p_agent, p_exclude, p_hash, p_fingerprint, p_same_limit, v_rare, v_common,
        p_lexical_limit;
END
$$
"""
# The function of migration 0006, which the reverse restores.
PREVIOUS_FUNCTION = """
CREATE OR REPLACE FUNCTION castellan_drawer_candidates(
    p_lock bigint, p_room bigint, p_agent text, p_exclude bigint,
    p_hash text, p_fingerprint text, p_groups text[],
    p_min_length bigint, p_max_length bigint, p_any_length_over bigint,
    p_same_limit int, p_lexical_limit int, p_group_limit int)
RETURNS TABLE (
    part int, id bigint, uuid uuid, content_hash varchar, normalized_content text,
    fingerprint varchar)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
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
    RETURN QUERY EXECUTE $q$
    SELECT 0, s.* FROM (
        SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
        FROM palace_drawer d
        WHERE d.room_id = $1 AND d.valid_to IS NULL AND d.content_hash = $4
          AND ($2 IS NULL OR d.agent = $2) AND ($3 IS NULL OR d.id <> $3)
        UNION
        SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
        FROM palace_drawer d
        WHERE d.room_id = $1 AND d.valid_to IS NULL AND d.fingerprint = $5
          AND ($2 IS NULL OR d.agent = $2) AND ($3 IS NULL OR d.id <> $3)
        ORDER BY 1 LIMIT $6
    ) s
    UNION ALL
    SELECT 1, x.* FROM (
        SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
        FROM (
            SELECT h.id, count(*) FILTER (WHERE h.rare) AS rare, count(*) AS hits
            FROM (
                SELECT r.id, true AS rare FROM unnest($7) AS r(id)
                UNION ALL
                SELECT c.id, false FROM unnest($8) AS c(id)
            ) h
            GROUP BY h.id
            ORDER BY rare DESC, hits DESC, h.id DESC
            LIMIT $9
        ) h
        JOIN palace_drawer d ON d.id = h.id
        WHERE d.valid_to IS NULL
        ORDER BY h.rare DESC, h.hits DESC, d.id DESC
    ) x
    $q$
    USING p_room, p_agent, p_exclude, p_hash, p_fingerprint, p_same_limit, v_rare, v_common,
        p_lexical_limit;
END
$$
"""


class Migration(migrations.Migration):
    dependencies = [("dedup", "0007_sweep_candidates_function")]

    operations = [
        RunSQLOn(
            "postgresql",
            [*DROP_SIGNATURES, FUNCTION],
            [*DROP_SIGNATURES, PREVIOUS_FUNCTION],
        )
    ]
