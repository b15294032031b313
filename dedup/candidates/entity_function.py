"""The PostgreSQL function behind `dedup.candidates.name_lookup`: its live text, which the
latest dedup migration installing it holds a copy of (tests/dedup/test_migrations.py).

It holds no matching rule: it takes the entity's lock, runs the exact lookups, and when they find
nothing returns the entities that store a signature asked, and the aliases a person recorded that
do, whose key is within a bound that keeps every key within two edits (`LEVENSHTEIN_BOUND`);
`within_reach` and the policy judge them in Python. What it saves is statements: before it, a
typo or a new name took five (the lock, the exact lookups, `SET LOCAL jit = off`, the signature
lookup, the entities in reach), 0.2 to 0.7 ms each through Django's cursor on this project's
machine, and the signatures' array was written into the statement's text by the client (0.3 ms
for 160 numbers); now it takes one, and the array is one text parameter.
"""

from __future__ import annotations

from collections.abc import Iterable

from dedup.policy.entities import MAX_POSSIBLE_EDITS
from palace.models import PERSON_ALIAS_SOURCES

ENTITY_FUNCTION_NAME = "castellan_entity_lookup_banded"
# The entity's columns a row holds after its part, in order: the model's concrete fields
# (tests/dedup/test_entity_function.py holds them equal), as `name_lookup` reads them.
ENTITY_FUNCTION_FIELDS = (
    "id",
    "uuid",
    "name",
    "kind",
    "key",
    "key_length",
    "redirect_to_id",
    "redirect_kind",
    "created_at",
)


# OSA within two edits is Levenshtein within four (an adjacent swap is two Levenshtein edits):
# `fuzzystrmatch`'s bounded Levenshtein keeps a superset of the owners within reach, which Python
# then judges exactly (`indexes_within_reach`). It counts characters in a UTF-8 database (in a
# SQL_ASCII one, bytes: create the database as UTF-8) and refuses more than 255: keys are at most
# 200 (`KEY_MAX_LENGTH`, the column's bound).
LEVENSHTEIN_BOUND = 2 * MAX_POSSIBLE_EDITS
_PERSON_SOURCES = ", ".join(f"'{source}'" for source in PERSON_ALIAS_SOURCES)


def _signed_owners(table: str, owner: str) -> str:
    """The owners (and their keys) that store a signature asked with a length in range, each
    once, in a fenced subquery: the bound on their keys is checked once per owner, after it,
    and before any of them is read."""
    return f"""(
        SELECT DISTINCT s.{owner} AS owner, s.key
        FROM unnest(p_signatures) AS asked(signature)
        CROSS JOIN LATERAL (
            SELECT s.{owner}, s.key FROM {table} s
            WHERE s.signature BETWEEN asked.signature + p_min_length
                                  AND asked.signature + p_max_length
            OFFSET 0
        ) s
        OFFSET 0
    ) o"""


def _entity_of(owner: str) -> str:
    """The entity by its primary key, if it answers for itself and is of the kind asked."""
    return f"""CROSS JOIN LATERAL (
        SELECT * FROM palace_entity e
        WHERE e.id = {owner} AND e.redirect_to_id IS NULL AND (p_kind IS NULL OR e.kind = p_kind)
        OFFSET 0
    ) e"""


_ENTITY_COLUMNS = ", ".join(f"e.{field}" for field in ENTITY_FUNCTION_FIELDS)
_WITHIN_BOUND = f"levenshtein_less_equal(o.key, p_key, {LEVENSHTEIN_BOUND}) <= {LEVENSHTEIN_BOUND}"


# Volatile PL/pgSQL: each statement sees what committed before it started, so the lookups, which
# run after the lock, see the entity that the writer who held it created. A NULL lock is one held
# already (a resolution run again in the same transaction); a NULL kind is any kind; NULL
# signatures ask only the exact lookups (fuzzy matching off). Part 3 comes first, read before the
# lookups: the count of creations (in `id`) of each key band (`palace.EntityKeyBand`, its length
# in `key_length`) that a new entity of this key would move, which `dedup.locks.
# creations_meanwhile` compares with the counts after it, to tell whether an entity within reach
# may have been created since these lookups saw the table (0 for a band no creation made yet).
# Part 0 is an entity the exact lookups
# found (the name's, the key's, an alias key's), once per alias of it (every one, NULL if none).
# Part 1 is an entity that stores a signature asked with a length in range, and part 2 an alias a
# person recorded that does (with the alias and its key), each once, if its key is within the
# bound and its entity answers for itself (no redirect) and is of the kind: the rows
# `entities_of_owners` reads for the owners Python finds within reach, read here without the
# round trip (0.7 ms at 1,000,000 entities) and only for keys the bound keeps.
#
# Plans are generic, made once per connection (planned at each call, the signature lookup spent
# 0.13 ms planning for 0.54 running), so they must not depend on the statistics: made on empty
# tables, the signature lookup read the whole signature index for each signature asked (332 ms at
# 3,000 entities) and the exact lookups the whole entity table, until the tables were analysed
# again. So every row is read by its index in a fenced LATERAL subquery (OFFSET 0: not flattened
# into a join the planner may turn around): the entity by its primary key, its aliases by their
# entity or an alias by its own, each signature asked by its range of the primary key (the
# owners fenced too, so their bound is checked before any is read); and table scans are off
# (tests/dedup/test_candidate_plans.py). JIT is off: the planner cannot estimate a range bounded
# by the other side of a join, costs the few dozen index searches in the millions and compiled
# them at every call (30 ms a lookup instead of 1.5 at 100,000 entities).
POSTGRESQL_ENTITY_FUNCTION = f"""
CREATE OR REPLACE FUNCTION {ENTITY_FUNCTION_NAME}(
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
    SELECT 3, coalesce(b.created, 0), NULL::uuid, NULL::varchar, NULL::varchar, NULL::varchar,
        l.length, NULL::bigint, NULL::varchar, NULL::timestamptz, NULL::varchar, NULL::varchar
    FROM generate_series(char_length(p_key), char_length(p_key) + 2) AS l(length)
    LEFT JOIN LATERAL (
        SELECT b.created FROM palace_entitykeyband b WHERE b.length = l.length OFFSET 0
    ) b ON true;
    RETURN QUERY
    SELECT 0, {_ENTITY_COLUMNS}, a.alias, NULL::varchar
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
    SELECT 1, {_ENTITY_COLUMNS}, NULL::varchar, NULL::varchar
    FROM {_signed_owners("palace_entitysignature", "entity_id")}
    {_entity_of("o.owner")}
    WHERE {_WITHIN_BOUND}
    UNION ALL
    SELECT 2, {_ENTITY_COLUMNS}, a.alias, a.key
    FROM {_signed_owners("palace_entityaliassignature", "alias_id")}
    CROSS JOIN LATERAL (
        SELECT a.entity_id, a.alias, a.key FROM palace_entityalias a
        WHERE a.id = o.owner AND a.source IN ({_PERSON_SOURCES})
        OFFSET 0
    ) a
    {_entity_of("a.entity_id")}
    WHERE {_WITHIN_BOUND};
END
$$
"""
POSTGRESQL_ENTITY_FUNCTION_REMOVE = (
    f"DROP FUNCTION IF EXISTS {ENTITY_FUNCTION_NAME}"
    "(bigint, text, text, text, bigint[], bigint, bigint)"
)


def signatures_parameter(signatures: Iterable[int]) -> str:
    """Signatures as one PostgreSQL array literal, for a `%s::bigint[]` parameter: psycopg
    writes a list into the statement one number at a time (0.3 ms for 160 of them), a string
    in one go."""
    return "{" + ",".join(map(str, signatures)) + "}"
