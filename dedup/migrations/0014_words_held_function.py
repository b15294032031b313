"""The PostgreSQL function `castellan_words_held`: which of a text's words at least so many
drawers of its room hold, read through the full-text index after the writer's lock. In a room of
100,000 drawers or more, a write's word groups ask only the words its room holds (a word no
drawer holds is a corruption or a new word, and a group holding it matches nothing). SQLite:
nothing (a statement of FTS5 lookups, dedup/candidates/drawers.py).

A migration is history: this file holds the SQL it ran, as text, and imports no project code.
dedup/candidates/drawer_function.py is today's definition; tests/dedup/test_migrations.py checks
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


REMOVE = "DROP FUNCTION IF EXISTS castellan_words_held(bigint, text[], int)"
FUNCTION = """
CREATE OR REPLACE FUNCTION castellan_words_held(p_lock bigint, p_terms text[], p_holders int)
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
            WHERE castellan_drawer_terms(m.room_id, m.normalized_content)
                  @@ (p_terms[v_index])::tsquery
            LIMIT p_holders
        ) h;
        IF v_holders >= p_holders THEN
            RETURN NEXT v_index;
        END IF;
    END LOOP;
END
$$
"""


class Migration(migrations.Migration):
    dependencies = [("dedup", "0013_entity_lookup_function")]

    operations = [RunSQLOn("postgresql", [FUNCTION], [REMOVE])]
