"""The PostgreSQL function a sweep asks a batch of drawers' candidates with, in one call
(`castellan_sweep_candidates`: for each drawer what `castellan_drawer_candidates` returns for it
alone). The write path's function is unchanged.

The SQL is held here as text; dedup/candidates/sweep_batch.py is the live definition, and
tests/review/test_sweep_batch.py checks that the installed function is it.
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


REMOVE = "DROP FUNCTION IF EXISTS castellan_sweep_candidates(bigint, text, bigint[], text[], text[], bigint[], bigint[], bigint[], int[], text[], int, int, int)"
FUNCTION = """
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
            WHERE to_tsvector('simple'::regconfig, left(m.normalized_content, 100000))
                  @@ to_tsquery('simple'::regconfig, g.query)
              AND m.room_id + 0 = p_room
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
    dependencies = [("dedup", "0006_candidates_function_generic_lookups")]

    operations = [RunSQLOn("postgresql", [REMOVE, FUNCTION], [REMOVE])]
