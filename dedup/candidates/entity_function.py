"""The PostgreSQL function behind `dedup.candidates.name_lookup`: its live text, which the
latest dedup migration installing it holds a copy of (tests/dedup/test_migrations.py).

It holds no matching rule: it takes the entity's lock, runs the exact lookups, and when they find
nothing returns the (owner, key) pairs of the signatures asked; `within_reach` and the policy judge
them in Python. What it saves is statements: before it, a typo or a new name took four (the lock,
the exact lookups, `SET LOCAL jit = off`, the signature lookup), 0.2 to 0.5 ms each through
Django's cursor on this project's machine, and the signatures' array was written into the
statement's text by the client (0.3 ms for 160 numbers); now it takes one, and the array is one
text parameter.
"""

from __future__ import annotations

ENTITY_FUNCTION_NAME = "castellan_entity_candidates"


def _signed_owners(part: int, table: str, owner: str) -> str:
    """The function's signature lookup in one table: (part, owner, its key) per signature asked
    that the owner stores with a length in range, in the function's columns."""
    return f"""    SELECT {part}, s.{owner},
           NULL::uuid, NULL::varchar, NULL::varchar, s.key, NULL::int,
           NULL::bigint, NULL::varchar, NULL::timestamptz, NULL::varchar
    FROM unnest(p_signatures) AS asked(signature)
    CROSS JOIN LATERAL (
        SELECT s.{owner}, s.key FROM {table} s
        WHERE s.signature BETWEEN asked.signature + p_min_length
                              AND asked.signature + p_max_length
        OFFSET 0
    ) s"""


# Volatile PL/pgSQL: each statement sees what committed before it started, so the lookups, which
# run after the lock, see the entity that the writer who held it created. A NULL lock is one held
# already (a resolution run again in the same transaction); a NULL kind is any kind; NULL
# signatures ask only the exact lookups (fuzzy matching off). Part 0 is an entity the exact lookups
# found (the name's, the key's, an alias key's), once per alias of it (every one, NULL if none);
# part 1 an entity and part 2 an alias, with its key, that stores a signature asked with a length
# in range, once per signature shared.
#
# Plans are generic, made once per connection (planned at each call, the signature lookup spent
# 0.13 ms planning for 0.54 running), so they must not depend on the statistics: made on empty
# tables, the signature lookup read the whole signature index for each signature asked (332 ms at
# 3,000 entities) and the exact lookups the whole entity table, until the tables were analysed
# again. So every row is read by its index in a fenced LATERAL subquery (OFFSET 0: not flattened
# into a join the planner may turn around): the entity by its primary key, its aliases by their
# entity, each signature asked by its range of the primary key; and table scans are off
# (tests/dedup/test_candidate_plans.py). JIT is off: the planner cannot estimate a range bounded
# by the other side of a join, costs the few dozen index searches in the millions and compiled
# them at every call (30 ms a lookup instead of 1.5 at 100,000 entities).
POSTGRESQL_ENTITY_FUNCTION = f"""
CREATE OR REPLACE FUNCTION {ENTITY_FUNCTION_NAME}(
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
{_signed_owners(1, "palace_entitysignature", "entity_id")}
    UNION ALL
{_signed_owners(2, "palace_entityaliassignature", "alias_id")};
END
$$
"""
POSTGRESQL_ENTITY_FUNCTION_REMOVE = (
    f"DROP FUNCTION IF EXISTS {ENTITY_FUNCTION_NAME}"
    "(bigint, text, text, text, bigint[], bigint, bigint)"
)
