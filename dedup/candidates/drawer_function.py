"""The PostgreSQL function behind `dedup.candidates.drawers.for_text`: its live text, which the
latest dedup migration installing it holds a copy of (tests/dedup/test_migrations.py)."""

from __future__ import annotations

from palace import fulltext

POSTGRESQL_FUNCTION_NAME = "castellan_drawer_candidates"


# The full-text expressions are the index's (palace/fulltext.py). A change to this text reaches a
# database only through a new migration (dedup/migrations/0010_candidates_functions_without_jit).
# Volatile PL/pgSQL: each statement sees what committed before it started, so candidates read after
# the lock include the rows of the writer that held it. A group's lookup is one scan of the
# full-text index: its query's terms are the room's words (`fulltext.postgresql_match`), so it
# reads the room's postings only, whatever the room's share of the store. Its plan must be that
# index whatever the statistics (a plan made on an empty table stayed a scan of the table, of a
# partial index, or of the room through a b-tree: 12-40 ms a write instead of 2): it names no
# column another index serves and table scans are off, so the plan is generic, made once per
# connection (planning five lookups per call cost a third of it). So are the other statements'
# plans: the ranking reads each ranked drawer by primary key (a fenced LATERAL lookup) and the
# exact copies the b-trees (partial, on the room and the hash or fingerprint) that match their
# conditions column for column, chosen by the table's statistics (with an empty table's, every
# index costs the same; a plan is made again when the table is analysed, as autovacuum does as it
# grows). Planned at each call (an EXECUTE), these two had cost 1.1 ms of a 1.7 ms call. A group
# keeps its newest p_group_limit matches (OFFSET 0: no sort in the lookup's plan); one that
# fills it is common. JIT is off: a generic plan's costs grow with the table's statistics, and at
# 10,000,000 drawers each group's lookup crossed jit_above_cost and was compiled at every call
# (3.7 ms of a 4 ms lookup, a write 20 ms instead of 1.4), for statements that read a few pages.


def _group_lookup() -> str:
    """A group's lookup in the function below."""
    return f"""
            SELECT f.id FROM (
                SELECT m.id FROM palace_drawer m
                WHERE {fulltext.postgresql_document("m")}
                      @@ {fulltext.postgresql_query("v_group")}
                  AND (p_agent IS NULL OR m.agent = p_agent)
                  AND (p_exclude IS NULL OR m.id <> p_exclude)
                  AND (char_length(m.normalized_content) BETWEEN p_min_length AND p_max_length
                       OR char_length(m.normalized_content) > p_any_length_over)
                OFFSET 0
            ) f
            ORDER BY f.id DESC LIMIT p_group_limit"""


POSTGRESQL_FUNCTION = f"""
CREATE OR REPLACE FUNCTION {POSTGRESQL_FUNCTION_NAME}(
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
    v_rare bigint[] := '{{}}';
    v_common bigint[] := '{{}}';
BEGIN
    IF p_lock IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(p_lock);
    END IF;
    FOREACH v_group IN ARRAY p_groups LOOP
        v_found := ARRAY({_group_lookup()});
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
POSTGRESQL_FUNCTION_REMOVE = (
    f"DROP FUNCTION IF EXISTS {POSTGRESQL_FUNCTION_NAME}"
    "(bigint, bigint, text, bigint, text, text, text[], bigint, bigint, bigint, int, int, int)"
)


# Which terms at least p_holders drawers hold (`dedup.candidates.drawers.words_in_room`): each
# term's lookup is the full-text index (a term the room lacks: one descent), stopping at its
# p_holders-th drawer. Read after the writer's lock, as the candidates are. A function for the
# same reasons as the one above: its plan is made once per connection and is the index whatever
# the statistics (as a statement, planning cost as much as running it: 0.37 ms for a text's
# unseen words in a room of 200,000, against 0.30).
WORDS_FUNCTION_NAME = "castellan_words_held"
WORDS_FUNCTION = f"""
CREATE OR REPLACE FUNCTION {WORDS_FUNCTION_NAME}(p_lock bigint, p_terms text[], p_holders int)
RETURNS SETOF int
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET max_parallel_workers_per_gather = 0
SET jit = off
AS $$
DECLARE
    v_index int;
    v_holders int;
BEGIN
    IF p_lock IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(p_lock);
    END IF;
    FOR v_index IN 1 .. coalesce(cardinality(p_terms), 0) LOOP
        SELECT count(*) INTO v_holders FROM (
            SELECT 1 FROM palace_drawer m
            WHERE {fulltext.postgresql_document("m")}
                  @@ {fulltext.postgresql_query("p_terms[v_index]")}
            LIMIT p_holders
        ) h;
        IF v_holders >= p_holders THEN
            RETURN NEXT v_index;
        END IF;
    END LOOP;
END
$$
"""
WORDS_FUNCTION_REMOVE = f"DROP FUNCTION IF EXISTS {WORDS_FUNCTION_NAME}(bigint, text[], int)"
