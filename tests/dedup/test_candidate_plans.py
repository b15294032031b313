"""The PostgreSQL candidate function plans its statements at each call: check that each group of
words is looked up in the full-text index alone, its terms the room's words (the index keys a
word of one room, palace/fulltext.py), in a palace of several analysed rooms and after statistics
of an empty table. (Earlier versions, in a palace of 110,000 drawers in two rooms, ANDed that
lookup with every index entry of the room: 2 ms per group instead of 0.04; and, asking
`room_id = p_room`, read the whole room through a b-tree when the statistics said it was small.)"""

import re

import pytest
from django.db import connection, transaction

from dedup import candidates, policy, services
from dedup.policy.signatures import key_signatures
from palace.models import Entity, EntityAlias, EntityAliasSignature, EntitySignature
from tests.dedup.drawers_data import bulk_drawers

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's plans"),
]

# The index's expression (palace/fulltext.py) as EXPLAIN prints it.
TERMS_IN_THE_INDEX = (
    "Index Cond: (castellan_drawer_terms(room_id, COALESCE(index_text, normalized_content)) @@ "
)
WORDS = ["amber", "basalt", "cobalt", "dolomite", "emerald", "feldspar", "garnet", "hematite"]


def fill(room, count):
    texts = [
        f"Sample {n}: {WORDS[n % 8]} {WORDS[(n * 3) % 8]} and {WORDS[(n * 5) % 8]} {n % 97}"
        for n in range(count)
    ]
    bulk_drawers(room, texts)


@pytest.fixture
def plans():
    """The plans of every statement run, nested ones included (auto_explain, as notices)."""
    notices: list[str] = []
    with connection.cursor() as cursor:
        cursor.execute("LOAD 'auto_explain'")
        for setting in ("log_min_duration = 0", "log_nested_statements = on", "log_level = notice"):
            cursor.execute(f"SET auto_explain.{setting}")
    connection.connection.add_notice_handler(lambda notice: notices.append(notice.message_primary))
    yield notices
    with connection.cursor() as cursor:
        cursor.execute("SET auto_explain.log_min_duration = -1")


def test_word_groups_are_looked_up_in_the_full_text_index_only(dedup_settings, plans):
    rooms = [services.room_get_or_create(wing="geology", room=name) for name in ("a", "b")]
    for room in rooms:
        fill(room, 3000)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE palace_drawer")
    text = "Sample: amber basalt and cobalt dolomite, emerald feldspar garnet hematite."
    normalized = policy.normalize_text(text)
    for _ in range(3):  # the cached plan is the one used from the first call on
        found = candidates.for_text(
            candidates.Scope(room=rooms[0]),
            policy.content_hash(text),
            policy.fingerprint(text),
            policy.query_words(text),
            lengths=candidates.LengthBand(*policy.near_length_range(len(normalized), 0.5), 2000),
        )
    assert found.lexical  # the lookups did find drawers
    group_plans = [plan for plan in plans if "::tsquery" in plan and "ARRAY" in plan]
    assert group_plans
    for plan in group_plans:
        assert "Bitmap Index Scan on palace_drawer_fulltext" in plan, plan
        assert TERMS_IN_THE_INDEX in plan, plan
        for slow in ("Seq Scan", "palace_drawer_room_id", "drawer_room_newest", "BitmapAnd"):
            assert slow not in plan, plan


def test_a_plan_made_on_an_empty_table_still_uses_the_index_after_growth(dedup_settings, plans):
    """The function's generic plan is made at a connection's first call and kept: made while
    the table was empty (and analysed so), it must still be the full-text index scan once the
    table has grown, with no new statistics."""
    room = services.room_get_or_create(wing="geology", room="new")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE palace_drawer")  # the statistics of an empty table
        cursor.execute("DISCARD PLANS")  # the plans this connection made before: gone
    text = "Sample: amber basalt and cobalt dolomite, emerald feldspar garnet hematite."
    normalized = policy.normalize_text(text)

    def lookup():
        return candidates.for_text(
            candidates.Scope(room=room),
            policy.content_hash(text),
            policy.fingerprint(text),
            policy.query_words(text),
            lengths=candidates.LengthBand(*policy.near_length_range(len(normalized), 0.5), 2000),
        )

    assert lookup().lexical == []  # the plan is made here, on the empty table
    fill(room, 6000)
    plans.clear()
    assert lookup().lexical
    group_plans = [plan for plan in plans if "::tsquery" in plan and "ARRAY" in plan]
    assert group_plans
    for plan in group_plans:
        assert "Bitmap Index Scan on palace_drawer_fulltext" in plan, plan
        assert TERMS_IN_THE_INDEX in plan, plan
        for slow in ("Seq Scan", "palace_drawer_room_id", "drawer_room_newest", "BitmapAnd"):
            assert slow not in plan, plan


def test_the_exact_copies_and_the_ranking_are_planned_anew_once_the_table_is_analysed(
    dedup_settings, plans
):
    """The exact copies' and the ranking's plans follow the statistics (with those of an empty
    table, every index costs the same): made while the table was analysed empty, they are made
    again once it is analysed grown (as autovacuum does), and then read the partial b-trees of
    the room and the hash or fingerprint, and the ranked drawers by primary key."""
    room = services.room_get_or_create(wing="geology", room="grown")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE palace_drawer")
        cursor.execute("DISCARD PLANS")
    text = "Sample: amber basalt and cobalt dolomite, emerald feldspar garnet hematite."
    normalized = policy.normalize_text(text)

    def lookup():
        return candidates.for_text(
            candidates.Scope(room=room),
            policy.content_hash(text),
            policy.fingerprint(text),
            policy.query_words(text),
            lengths=candidates.LengthBand(*policy.near_length_range(len(normalized), 0.5), 2000),
        )

    lookup()  # planned on the empty table
    fill(room, 6000)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE palace_drawer")
    plans.clear()
    assert lookup().lexical
    [exact_plan] = [plan for plan in plans if "d.content_hash = p_hash" in plan]
    for index in ("drawer_current_hash", "drawer_current_fingerprint"):
        assert f"Index Scan using {index} on palace_drawer" in exact_plan, exact_plan
    [ranking_plan] = [plan for plan in plans if "unnest(v_rare)" in plan]
    assert "Index Scan using palace_drawer_pkey on palace_drawer" in ranking_plan, ranking_plan
    for plan in (exact_plan, ranking_plan):
        for slow in ("Seq Scan", "palace_drawer_room_id", "drawer_room_newest", "Materialize"):
            assert slow not in plan, plan


def test_the_candidate_functions_never_compile_their_statements(dedup_settings, plans):
    """JIT is off in both functions: at 10,000,000 drawers each group's generic plan crossed
    jit_above_cost and compiled at every call (3.7 ms of a 4 ms lookup). Here JIT is made as
    eager as it gets for the session; the function's own setting must still win."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT proname, proconfig FROM pg_proc WHERE proname = ANY(%s) ORDER BY 1",
            [["castellan_drawer_candidates", "castellan_sweep_candidates"]],
        )
        configs = cursor.fetchall()
        cursor.execute("SELECT pg_jit_available()")
        jit_available = cursor.fetchone()[0]
        for setting in ("jit = on", "jit_above_cost = 0", "auto_explain.log_analyze = on"):
            cursor.execute(f"SET {setting}")
    assert [name for name, config in configs if "jit=off" in config] == [
        "castellan_drawer_candidates",
        "castellan_sweep_candidates",
    ]
    if not jit_available:
        pytest.skip("this PostgreSQL is built without JIT: nothing could compile")
    room = services.room_get_or_create(wing="ops", room="jit")
    fill(room, 50)
    services.drawer_write(room=room, content="Sample 3: amber dolomite and feldspar garnet 3")
    inside = [plan for plan in plans if "p_same_limit" in plan or TERMS_IN_THE_INDEX in plan]
    assert len(inside) >= 3, plans  # the group lookups, the exact copies, the ranking
    assert any("JIT:" in plan for plan in plans), plans  # the session's own statements compile
    assert not [plan for plan in inside if "JIT:" in plan]


# --- the entity candidates function (dedup/candidates/entity_function.py) ------------------------


def fill_entities(count):
    """Entities with their signatures, one in ten with an alias a person recorded and its
    signatures, as the services store them."""
    names = [f"{WORDS[n % 8].title()} {WORDS[(n * 3) % 8].title()} {n}" for n in range(count)]
    entities = Entity.objects.bulk_create(
        Entity(name=name, kind="mineral", key=(key := policy.entity_key(name)), key_length=len(key))
        for name in names
    )
    aliases = EntityAlias.objects.bulk_create(
        EntityAlias(
            entity=entity, alias=f"{entity.name} ore", key=f"{entity.key} ore", source="api"
        )
        for entity in entities[::10]
    )
    EntitySignature.objects.bulk_create(
        EntitySignature(signature=signature, entity=entity, key=entity.key)
        for entity in entities
        for signature in key_signatures(entity.key)
    )
    EntityAliasSignature.objects.bulk_create(
        EntityAliasSignature(signature=signature, alias=alias, key=alias.key)
        for alias in aliases
        for signature in key_signatures(alias.key)
    )


ENTITY_TABLES = (
    "palace_entity, palace_entityalias, palace_entitysignature, palace_entityaliassignature"
)


def entity_lookup_plans(plans):
    return [plan for plan in plans if "castellan_entity_lookup" not in plan and "p_" in plan]


def test_the_entity_function_s_plans_made_on_empty_tables_use_the_indexes_after_growth(
    dedup_settings, plans
):
    """Its plans are generic, made at a connection's first call and kept (until the tables are
    analysed): made on empty tables, the exact lookups must still read the name's, the key's
    and the alias key's indexes, and the signature lookup the signature tables' primary keys
    (index only) and the entities and aliases it keeps by theirs, once the tables have grown."""
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {ENTITY_TABLES}")
        cursor.execute("DISCARD PLANS")
    services.entity_resolve(name="Garnet Basalt", kind="mineral")  # planned here, tables empty
    fill_entities(3000)
    plans.clear()
    assert services.entity_resolve(name="Garnet Basalt", kind="mineral").rule == "exact"
    assert services.entity_resolve(name="Dolomite Basalt 11", kind="mineral").rule == "exact"
    by_alias = services.entity_resolve(name="COBALT GARNET 10 ORE", kind="mineral")
    assert (by_alias.rule, by_alias.entity.name) == ("alias", "Cobalt Garnet 10")
    typo = services.entity_resolve(name="Dolomite Basalx 19", kind="mineral")
    assert typo.rule == "typo"
    alias_typo = services.entity_resolve(name="Cobalt Garnet 10 orx", kind="mineral")
    assert (alias_typo.rule, alias_typo.entity.name) == ("typo", "Cobalt Garnet 10")
    inside = entity_lookup_plans(plans)
    signature_plans = [plan for plan in inside if "palace_entityaliassignature" in plan]
    exact_plans = [plan for plan in inside if "p_name" in plan]
    assert len(exact_plans) == 5
    assert len(signature_plans) == 2
    for plan in exact_plans:
        for index in ("entity_unique_name_kind", "entity_key", "entity_alias_key"):
            assert f" using {index} on " in plan, plan
        # Each entity found, and its aliases, read by their index: not the whole table.
        assert re.search(r"palace_entity_pkey on palace_entity e .*\n *Index Cond: \(id = ", plan)
        assert "Index Cond: (entity_id = e.id)" in plan, plan
    for plan in signature_plans:
        for table in ("palace_entitysignature", "palace_entityaliassignature"):
            assert f"Index Only Scan using {table}_pkey on {table}" in plan, plan
        # Each signature asked is one search of its range, not a scan of the index.
        assert plan.count("Index Cond: ((signature >= (asked") == 2, plan
        # Each owner's key is held to the bound once, before anything of it is read; then
        # the entities and aliases kept are read by their primary key.
        bounded = r"Subquery Scan on o(_1)? .*\n *Filter: \(levenshtein_less_equal\(\(o"
        assert len(re.findall(bounded, plan)) == 2, plan
        alias_read = r"palace_entityalias_pkey on palace_entityalias a .*\n *Index Cond: \(id = o"
        assert re.search(alias_read, plan), plan
        assert plan.count("palace_entity_pkey on palace_entity e") == 2, plan
    for plan in inside:
        assert "Seq Scan" not in plan, plan
        assert "JIT:" not in plan, plan


def test_the_entity_function_never_compiles_its_statements(dedup_settings, plans):
    """JIT is off in the function: the planner costs the signature lookup's range join in the
    millions (it cannot estimate a range bounded by the other side of a join) and compiled it at
    every call, 30 ms a lookup instead of 1.5 at 100,000 entities."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT proconfig FROM pg_proc WHERE proname = %s", [candidates.ENTITY_FUNCTION_NAME]
        )
        [(config,)] = cursor.fetchall()
        cursor.execute("SELECT pg_jit_available()")
        jit_available = cursor.fetchone()[0]
        for setting in ("jit = on", "jit_above_cost = 0", "auto_explain.log_analyze = on"):
            cursor.execute(f"SET {setting}")
    assert "jit=off" in config
    if not jit_available:
        pytest.skip("this PostgreSQL is built without JIT: nothing could compile")
    fill_entities(50)
    services.entity_resolve(name="Dolomite Basalx 19", kind="mineral")
    inside = entity_lookup_plans(plans)
    assert len(inside) >= 2, plans  # the exact lookups, the signature lookup
    assert any("JIT:" in plan for plan in plans), plans  # the session's own statements compile
    assert not [plan for plan in inside if "JIT:" in plan]


def test_a_search_reads_the_full_text_index(dedup_settings):
    """Search (`palace.selectors.drawers_matching`) asks each group through the very expression
    the index is built on: its plan is the index's, never a scan of the table computing every
    drawer's terms (table scans priced out, so a small table's is not chosen for its size)."""
    from palace import selectors

    room = services.room_get_or_create(wing="geology", room="a")
    fill(room, 3000)
    sql, params = selectors._matching_sql([["amber", "basalt"]], None, None, None, None, None, 20)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("ANALYZE palace_drawer")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Bitmap Index Scan on palace_drawer_fulltext" in plan, plan
    assert "Seq Scan on palace_drawer" not in plan, plan
