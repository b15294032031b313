"""The PostgreSQL candidate functions run with JIT off. Their plans are generic (made once per
connection), and a generic plan's costs grow with the table's statistics: at 10,000,000 drawers
each group's full-text lookup crossed `jit_above_cost` and was compiled at every call, 3.7 ms of
a 4 ms lookup (a dedup write 20 ms instead of 1.4) for statements that read a few pages. The
functions are otherwise those of 0009.

The reverse puts back the functions of 0009. The SQL is held here as text;
dedup/candidates/drawer_function.py and sweep_batch.py are the live definitions, and
tests/dedup/test_migrations.py checks that the installed functions are them.
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
    "DROP FUNCTION IF EXISTS castellan_drawer_candidates(bigint, bigint, text, bigint, text, text, text[], bigint, bigint, bigint, int, int, int)",
    "DROP FUNCTION IF EXISTS castellan_drawer_candidates(bigint, bigint, text, bigint, text, text, text[], bigint, bigint, bigint, int, int, int, boolean)",
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
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET max_parallel_workers_per_gather = 0
SET jit = off
AS $$
#variable_conflict use_column
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
                WHERE castellan_drawer_terms(m.room_id, m.normalized_content)
                      @@ (v_group)::tsquery
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
    ) s;
    RETURN QUERY
    SELECT 1, d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
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
    CROSS JOIN LATERAL (
        SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
        FROM palace_drawer d WHERE d.id = h.id AND d.valid_to IS NULL
        OFFSET 0
    ) d
    ORDER BY h.rare DESC, h.hits DESC, d.id DESC;
END
$$
"""
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
#variable_conflict use_column
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
                WHERE castellan_drawer_terms(m.room_id, m.normalized_content)
                      @@ (v_group)::tsquery
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
    ) s;
    RETURN QUERY
    SELECT 1, d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
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
    CROSS JOIN LATERAL (
        SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
        FROM palace_drawer d WHERE d.id = h.id AND d.valid_to IS NULL
        OFFSET 0
    ) d
    ORDER BY h.rare DESC, h.hits DESC, d.id DESC;
END
$$
"""
SWEEP_REMOVE = "DROP FUNCTION IF EXISTS castellan_sweep_candidates(bigint, text, bigint[], text[], text[], bigint[], bigint[], bigint[], int[], text[], int, int, int)"
SWEEP_FUNCTION = """
CREATE OR REPLACE FUNCTION castellan_sweep_candidates(
    p_room bigint, p_agent text, p_ids bigint[], p_hashes text[], p_fingerprints text[],
    p_min_lengths bigint[], p_max_lengths bigint[], p_any_lengths_over bigint[],
    p_owners int[], p_groups text[],
    p_same_limit int, p_lexical_limit int, p_group_limit int)
RETURNS TABLE (
    owner bigint, part int, rank bigint, id bigint, uuid uuid, content_hash varchar,
    normalized_content text, fingerprint varchar)
LANGUAGE sql STABLE
SET enable_seqscan = off
SET max_parallel_workers_per_gather = 0
SET jit = off
AS $$
WITH batch AS (
    SELECT b.owner, b.id, b.hash, b.fingerprint, b.low, b.high, b.over
    FROM unnest(p_ids, p_hashes, p_fingerprints, p_min_lengths, p_max_lengths,
                p_any_lengths_over)
         WITH ORDINALITY AS b(id, hash, fingerprint, low, high, over, owner)
), groups AS (
    SELECT g.grp, g.owner, g.query, p_ids[g.owner] AS exclude, p_min_lengths[g.owner] AS low,
           p_max_lengths[g.owner] AS high, p_any_lengths_over[g.owner] AS over
    FROM unnest(p_owners, p_groups) WITH ORDINALITY AS g(owner, query, grp)
), found AS (
    SELECT g.owner, g.grp, f.id, count(*) OVER (PARTITION BY g.grp) AS size
    FROM groups g CROSS JOIN LATERAL (
        SELECT f.id FROM (
            SELECT m.id FROM palace_drawer m
            WHERE castellan_drawer_terms(m.room_id, m.normalized_content)
                  @@ (g.query)::tsquery
              AND (p_agent IS NULL OR m.agent = p_agent)
              AND m.id <> g.exclude
              AND (char_length(m.normalized_content) BETWEEN g.low AND g.high
                   OR char_length(m.normalized_content) > g.over)
            OFFSET 0
        ) f
        ORDER BY f.id DESC LIMIT p_group_limit
    ) f
), ranked AS (
    SELECT h.owner, h.id, row_number() OVER (
        PARTITION BY h.owner
        ORDER BY count(*) FILTER (WHERE h.size < p_group_limit) DESC, count(*) DESC, h.id DESC
    ) AS rank
    FROM found h
    GROUP BY h.owner, h.id
)
SELECT b.owner, 0, 0::bigint, s.*
FROM batch b CROSS JOIN LATERAL (
    SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
    FROM palace_drawer d
    WHERE d.room_id = p_room AND d.valid_to IS NULL AND d.content_hash = b.hash
      AND (p_agent IS NULL OR d.agent = p_agent) AND d.id <> b.id
    UNION
    SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
    FROM palace_drawer d
    WHERE d.room_id = p_room AND d.valid_to IS NULL AND d.fingerprint = b.fingerprint
      AND (p_agent IS NULL OR d.agent = p_agent) AND d.id <> b.id
    ORDER BY 1 LIMIT p_same_limit
) s
UNION ALL
SELECT r.owner, 1, r.rank, d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
FROM ranked r JOIN palace_drawer d ON d.id = r.id
WHERE r.rank <= p_lexical_limit AND d.valid_to IS NULL
ORDER BY 1, 2, 3, 4
$$
"""
PREVIOUS_SWEEP_FUNCTION = """
CREATE OR REPLACE FUNCTION castellan_sweep_candidates(
    p_room bigint, p_agent text, p_ids bigint[], p_hashes text[], p_fingerprints text[],
    p_min_lengths bigint[], p_max_lengths bigint[], p_any_lengths_over bigint[],
    p_owners int[], p_groups text[],
    p_same_limit int, p_lexical_limit int, p_group_limit int)
RETURNS TABLE (
    owner bigint, part int, rank bigint, id bigint, uuid uuid, content_hash varchar,
    normalized_content text, fingerprint varchar)
LANGUAGE sql STABLE
SET enable_seqscan = off
SET max_parallel_workers_per_gather = 0
AS $$
WITH batch AS (
    SELECT b.owner, b.id, b.hash, b.fingerprint, b.low, b.high, b.over
    FROM unnest(p_ids, p_hashes, p_fingerprints, p_min_lengths, p_max_lengths,
                p_any_lengths_over)
         WITH ORDINALITY AS b(id, hash, fingerprint, low, high, over, owner)
), groups AS (
    SELECT g.grp, g.owner, g.query, p_ids[g.owner] AS exclude, p_min_lengths[g.owner] AS low,
           p_max_lengths[g.owner] AS high, p_any_lengths_over[g.owner] AS over
    FROM unnest(p_owners, p_groups) WITH ORDINALITY AS g(owner, query, grp)
), found AS (
    SELECT g.owner, g.grp, f.id, count(*) OVER (PARTITION BY g.grp) AS size
    FROM groups g CROSS JOIN LATERAL (
        SELECT f.id FROM (
            SELECT m.id FROM palace_drawer m
            WHERE castellan_drawer_terms(m.room_id, m.normalized_content)
                  @@ (g.query)::tsquery
              AND (p_agent IS NULL OR m.agent = p_agent)
              AND m.id <> g.exclude
              AND (char_length(m.normalized_content) BETWEEN g.low AND g.high
                   OR char_length(m.normalized_content) > g.over)
            OFFSET 0
        ) f
        ORDER BY f.id DESC LIMIT p_group_limit
    ) f
), ranked AS (
    SELECT h.owner, h.id, row_number() OVER (
        PARTITION BY h.owner
        ORDER BY count(*) FILTER (WHERE h.size < p_group_limit) DESC, count(*) DESC, h.id DESC
    ) AS rank
    FROM found h
    GROUP BY h.owner, h.id
)
SELECT b.owner, 0, 0::bigint, s.*
FROM batch b CROSS JOIN LATERAL (
    SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
    FROM palace_drawer d
    WHERE d.room_id = p_room AND d.valid_to IS NULL AND d.content_hash = b.hash
      AND (p_agent IS NULL OR d.agent = p_agent) AND d.id <> b.id
    UNION
    SELECT d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
    FROM palace_drawer d
    WHERE d.room_id = p_room AND d.valid_to IS NULL AND d.fingerprint = b.fingerprint
      AND (p_agent IS NULL OR d.agent = p_agent) AND d.id <> b.id
    ORDER BY 1 LIMIT p_same_limit
) s
UNION ALL
SELECT r.owner, 1, r.rank, d.id, d.uuid, d.content_hash, d.normalized_content, d.fingerprint
FROM ranked r JOIN palace_drawer d ON d.id = r.id
WHERE r.rank <= p_lexical_limit AND d.valid_to IS NULL
ORDER BY 1, 2, 3, 4
$$
"""


class Migration(migrations.Migration):
    dependencies = [("dedup", "0009_candidates_function_room_terms")]

    operations = [
        RunSQLOn(
            "postgresql",
            [*DROP_SIGNATURES, FUNCTION, SWEEP_REMOVE, SWEEP_FUNCTION],
            [*DROP_SIGNATURES, PREVIOUS_FUNCTION, SWEEP_REMOVE, PREVIOUS_SWEEP_FUNCTION],
        )
    ]
