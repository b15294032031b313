"""The PostgreSQL function `castellan_entity_lookup_banded`, which a mention's resolution calls from
this release on: `castellan_entity_lookup` (0013) that first reads, for the key's length, the
counts of the key bands (palace 0019, `EntityKeyBand`) a new entity would move. A writer about to
create an entity counts its creation there (`dedup.locks.creations_meanwhile`) and, if a count
moved since its lookup, looks again: two near names written at the same moment no longer make two
entities. SQLite: nothing (its writers are serial).

The function gets a name of its own, and 0013's is left as it is, because its rows changed
shape (a band's rows come first): processes of the release before, still serving while this
migration runs, go on calling 0013's function. A later release drops it. The reverse drops the
new function.

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


REMOVE = (
    "DROP FUNCTION IF EXISTS castellan_entity_lookup_banded"
    "(bigint, text, text, text, bigint[], bigint, bigint)"
)
FUNCTION = """
CREATE OR REPLACE FUNCTION castellan_entity_lookup_banded(
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
    dependencies = [
        ("dedup", "0014_words_held_function"),
        ("palace", "0019_entity_key_bands"),
    ]

    operations = [RunSQLOn("postgresql", [FUNCTION], [REMOVE])]
