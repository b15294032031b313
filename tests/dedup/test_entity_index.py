"""The entity signature index on the database: what the stored tables answer equals the full
scan they replace, they are written with every entity and person alias (and go with them), and
the lookups read indexes, on SQLite and PostgreSQL."""

from __future__ import annotations

import importlib
import random

import pytest
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor

from dedup import policy, services
from dedup.backfill import backfill_entity_keys
from dedup.candidates import entities as candidates
from dedup.policy.signatures import key_signatures
from palace.models import (
    PERSON_ALIAS_SOURCES,
    Entity,
    EntityAlias,
    EntityAliasSignature,
    EntitySignature,
)
from tests.dedup.policy.test_signatures import edited, random_key

pytestmark = pytest.mark.django_db

EXACT_ONLY = services.DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)
KINDS = ("person", "tool")


def stored_signatures(entity: Entity) -> set[int]:
    return set(EntitySignature.objects.filter(entity=entity).values_list("signature", flat=True))


def near(a: str, b: str) -> bool:
    return policy.edit_distance(a, b) <= 2


@pytest.fixture
def palace(dedup_settings):
    """Entities written through the service (exact rules only, so every key stays its own), in
    clusters of near keys, with aliases a person recorded, and a few redirected."""
    rng = random.Random(14)
    names: set[str] = set()
    while len(names) < 240:
        base = random_key(rng)
        names |= {base, *(edited(base, rng, rng.randint(1, 3)) for _ in range(rng.randint(0, 4)))}
    entities = []
    for name in sorted(names):
        if name.strip():
            resolution = services.entity_resolve(
                name=name, kind=rng.choice(KINDS), config=EXACT_ONLY
            )
            entities.append(resolution.entity)
    for entity in rng.sample(entities, 30):
        services.entity_alias_add(entity=entity, alias=edited(entity.key, rng, 2) + "z")
    for entity in rng.sample(entities, 10):
        Entity.objects.filter(pk=entity.pk).update(redirect_to=entities[0])
    return rng, entities


def test_the_stored_index_answers_what_a_full_scan_finds(palace):
    rng, entities = palace
    every = list(Entity.objects.filter(redirect_to__isnull=True))
    aliases = list(
        EntityAlias.objects.filter(
            entity__redirect_to__isnull=True, source__in=PERSON_ALIAS_SOURCES
        ).select_related("entity")
    )
    probes = [edited(rng.choice(entities).key, rng, rng.choice([1, 2, 3])) for _ in range(150)]
    differences, neighbours, compared = [], 0, 0
    for probe in probes:
        for kind in ("person", "other"):
            scanned = {
                e.pk for e in every if policy.kind_matches(kind, e.kind) and near(probe, e.key)
            }
            # Exactly the set: the candidate layer keeps the keys within two edits itself.
            indexed = {e.pk for e in candidates.entities_within_reach(kind=kind, key=probe)}
            scanned_aliases = {
                a.pk
                for a in aliases
                if policy.kind_matches(kind, a.entity.kind) and near(probe, a.key)
            }
            found_aliases = candidates.person_aliases_within_reach(kind=kind, key=probe)
            indexed_aliases = {a.pk for a in found_aliases}
            neighbours += len(scanned) + len(scanned_aliases)
            if (indexed, indexed_aliases) != (scanned, scanned_aliases):
                differences.append(
                    (probe, kind, indexed ^ scanned, indexed_aliases ^ scanned_aliases)
                )
            # The write path's lookup (on PostgreSQL the function, which bounds the keys itself
            # before reading any entity) reaches the same entities, each with those aliases.
            with transaction.atomic():
                lookup = candidates.name_lookup(
                    kind=kind, name=probe, key=probe, fuzzy=True, lock=None
                )
            if lookup.named:  # the probe is a stored key: the exact rules answer
                continue
            expected: dict[int, list[str]] = {pk: [] for pk in scanned}
            for alias in aliases:
                if alias.pk in scanned_aliases:
                    expected.setdefault(alias.entity_id, []).append(alias.alias)
            reached = {k.entity.pk: sorted(k.aliases) for k in lookup.reached}
            compared += 1
            if reached != {pk: sorted(spellings) for pk, spellings in expected.items()}:
                differences.append((probe, kind, "name_lookup", reached, expected))
    assert differences == []
    assert neighbours > len(probes)  # there were neighbours to lose
    assert compared > len(probes)  # the write path's lookup was compared for most probes


def test_an_entity_is_indexed_when_it_is_created(dedup_settings):
    entity = services.entity_resolve(name="Ada Lovelace", kind="person").entity
    assert stored_signatures(entity) == key_signatures("ada lovelace")
    stored_keys = EntitySignature.objects.filter(entity=entity).values_list("key", flat=True)
    assert set(stored_keys) == {"ada lovelace"}  # the key beside each, for the lookup to judge


def test_an_alias_a_person_recorded_is_indexed_and_goes_with_it(dedup_settings):
    entity = services.entity_resolve(name="Ada Lovelace", kind="person").entity
    services.entity_alias_add(entity=entity, alias="The Countess")
    alias = EntityAlias.objects.get(alias="The Countess")
    indexed = EntityAliasSignature.objects.filter(alias=alias).values_list("signature", "key")
    assert set(indexed) == {(s, "the countess") for s in key_signatures("the countess")}
    alias.delete()
    assert not EntityAliasSignature.objects.exists()


def test_an_alias_a_convergence_recorded_is_not_indexed(dedup_settings):
    services.entity_resolve(name="Ada Lovelace", kind="person")
    services.entity_resolve(name="ADA LOVELACE", kind="person")
    assert EntityAlias.objects.filter(alias="ADA LOVELACE").exists()
    assert not EntityAliasSignature.objects.exists()


def test_a_legacy_entity_is_indexed_by_the_backfill(dedup_settings):
    legacy = Entity.objects.create(name="Ada Lovelace", kind="person", key="", key_length=0)
    backfill_entity_keys(Entity, EntityAlias)
    assert stored_signatures(legacy) == key_signatures("ada lovelace")
    assert services.entity_resolve(name="Ada Lovelaze", kind="person").entity == legacy


# --- the plans -----------------------------------------------------------------------------


@pytest.fixture
def analysed(dedup_settings):
    """3,000 entities and person aliases with their signatures (bulk, as bench/entities.py fills),
    analysed, so the
    planner chooses as it would in a real palace."""
    rng = random.Random(3)
    keys = {"".join(rng.choices("abcdefghijklmnopqrstuvwxyz ", k=12)) for _ in range(3000)}
    entities = Entity.objects.bulk_create(
        Entity(name=key, kind=KINDS[n % 2], key=key, key_length=len(key))
        for n, key in enumerate(sorted(keys))
    )
    EntitySignature.objects.bulk_create(
        EntitySignature(entity=e, signature=s, key=e.key)
        for e in entities
        for s in key_signatures(e.key)
    )
    aliases = EntityAlias.objects.bulk_create(
        EntityAlias(entity=e, alias=e.key[::-1], key=e.key[::-1], source=EntityAlias.Source.API)
        for e in entities
    )
    EntityAliasSignature.objects.bulk_create(
        EntityAliasSignature(alias=a, signature=s, key=a.key)
        for a in aliases
        for s in key_signatures(a.key)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def plan(queryset) -> str:
    return plan_of(*queryset.query.sql_with_params())


def plan_of(sql, params) -> str:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"EXPLAIN {sql}", params)
            return "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
        return "\n".join(row[-1] for row in cursor.fetchall())


@pytest.mark.parametrize("kind", ["person", "other"])
def test_the_exact_lookups_read_one_index_each(analysed, kind):
    text = plan(candidates.entities_matching(kind=kind, name="Ada Lovelace", key="ada lovelace"))
    assert "Seq Scan" not in text, text  # PostgreSQL
    assert not [line for line in text.splitlines() if line.startswith("SCAN")], text  # SQLite
    # The name's lookup: the unique (name, kind) index (on SQLite, its automatic index).
    assert "entity_unique_name_kind" in text or "(name=?)" in text, text
    assert "entity_key" in text, text
    assert "entity_alias_key" in text, text


@pytest.mark.django_db(transaction=True)  # VACUUM runs outside a transaction
def test_the_signatures_and_keys_are_read_from_the_index_alone(analysed):
    """(owner, key) from the primary keys alone: an index-only scan of the key each INCLUDEs on
    PostgreSQL (once vacuumed, as autovacuum keeps a table), the WITHOUT ROWID table's own
    primary key on SQLite; no table's heap, and no entity."""
    tables = [model._meta.db_table for model in (EntitySignature, EntityAliasSignature)]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"VACUUM ANALYZE {', '.join(tables)}")
    key = "ada lovelace"
    signed = candidates.signed_owners_sql(key, connection.vendor)
    text = plan_of(*signed)
    assert "Seq Scan" not in text, text
    assert "Heap" not in text, text  # no bitmap heap scan either
    # No table is scanned; SQLite scans only the JSON array of the signatures asked.
    scans = [line for line in text.splitlines() if line.startswith("SCAN")]
    assert all(line.startswith("SCAN asked VIRTUAL TABLE") for line in scans), text
    for table in tables:
        if connection.vendor == "postgresql":
            assert f"Index Only Scan using {table}_pkey on {table}" in text, text
            assert "Index Cond: ((signature >= " in text, text  # each one's range of lengths
        else:
            # Each signature's range of lengths, inside the index.
            bounded = "(signature>? AND signature<?)"
            assert f"SEARCH {table} USING PRIMARY KEY {bounded}" in text, text
    assert "palace_entity " not in text + " ", text  # no entity row is read here


def test_the_lookup_of_both_tables_is_one_statement(analysed, django_assert_num_queries):
    key = Entity.objects.order_by("pk").values_list("key", flat=True).first()
    jit_off = 1 if connection.vendor == "postgresql" else 0  # SET LOCAL, below
    with django_assert_num_queries(1 + jit_off):
        entity_ids, _ = candidates.owners_within_reach(key + "z")
    assert entity_ids  # the entity itself, one edit away


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's JIT")
@pytest.mark.django_db(transaction=True)
def test_the_lookup_runs_without_jit_and_leaves_the_session_as_it_was(dedup_settings):
    """The lookup's cost is estimated in the millions (a range bounded by the other side of a
    join), which JIT compiled at every call. It turns JIT off for its transaction only: one of
    its own when the caller has none (a sweep's), the caller's otherwise."""

    def jit() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SHOW jit")
            return cursor.fetchone()[0]

    with connection.cursor() as cursor:
        cursor.execute("SET jit = on")
    candidates.owners_within_reach("ada lovelace")
    assert jit() == "on"  # outside a transaction: its own, and the session's setting is kept
    with transaction.atomic():
        candidates.owners_within_reach("ada lovelace")
        assert jit() == "off"
    assert jit() == "on"


@pytest.mark.parametrize("kind", ["person", "other"])
@pytest.mark.parametrize("lookup", ["entities_within_reach", "person_aliases_within_reach"])
def test_the_rows_the_signatures_name_are_read_by_primary_key(analysed, kind, lookup):
    owner = Entity if lookup == "entities_within_reach" else EntityAlias
    key = owner.objects.order_by("pk").values_list("key", flat=True).first() + "z"  # a typo
    """By primary key, on both databases. (The entity of an alias is joined as the planner
    likes: at 3,000 rows PostgreSQL may hash them all.)"""
    text = plan(getattr(candidates, lookup)(kind=kind, key=key))
    assert "_entitysignature" not in text, text  # the ids were judged first, apart
    table = owner._meta.db_table
    assert f"Seq Scan on {table} " not in text, text
    assert f"SCAN {table}\n" not in text + "\n", text
    assert f"{table}_pkey" in text or f"SEARCH {table} USING INTEGER PRIMARY KEY" in text, text


# --- the data migration --------------------------------------------------------------------


def _migrate(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])


@pytest.mark.django_db(transaction=True)
def test_the_data_migration_indexes_the_entities_and_person_aliases_stored_before():
    try:
        _migrate(("dedup", "0003_candidates_function_length_band"))  # palace's schema stays
        # Rows as a store held them before: no signatures (the current models fit the schema).
        ada = Entity.objects.create(name="Ada", kind="person", key="ada lovelace")
        for alias, source in (("Countess", "curator"), ("ADA", "convergence")):
            EntityAlias.objects.create(entity=ada, alias=alias, key=alias.lower(), source=source)
        assert not EntitySignature.objects.exists()
        _migrate(("dedup", "0004_entity_signatures"))
        assert stored_signatures(Entity.objects.get(pk=ada.pk)) == key_signatures("ada lovelace")
        indexed = EntityAliasSignature.objects.values_list("alias__alias", flat=True).distinct()
        assert list(indexed) == ["Countess"]
    finally:
        executor = MigrationExecutor(connection)  # back to the latest: what later tests use
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_the_key_migration_fills_the_owners_keys_and_covers_them():
    try:
        _migrate(("palace", "0011_drawer_fulltext_room"))  # signatures without their key
        ada = Entity.objects.create(name="Ada", kind="person", key="ada lovelace")
        alias = EntityAlias.objects.create(entity=ada, alias="Countess", key="countess")
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO palace_entitysignature (signature, entity_id) VALUES (1, %s)",
                [ada.pk],
            )
            cursor.execute(
                "INSERT INTO palace_entityaliassignature (signature, alias_id) VALUES (2, %s)",
                [alias.pk],
            )
        _migrate(("palace", "0012_entity_signature_keys"))
        assert list(EntitySignature.objects.values_list("key", flat=True)) == ["ada lovelace"]
        assert list(EntityAliasSignature.objects.values_list("key", flat=True)) == ["countess"]
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SELECT pg_get_indexdef('palace_entitysignature_pkey'::regclass)")
                assert "INCLUDE (key)" in cursor.fetchone()[0]
            else:
                cursor.execute(
                    "SELECT sql FROM sqlite_master WHERE name = 'palace_entitysignature'"
                )
                assert cursor.fetchone()[0].endswith("WITHOUT ROWID")
    finally:
        executor = MigrationExecutor(connection)  # back to the latest: what later tests use
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_the_length_migration_computes_every_signature_again_and_reverses():
    """dedup/0011: a store's signatures of the form before (tags carrying the key's length)
    become today's (the length in the low byte), so a typo of a stored entity or of an alias a
    person recorded is found after; reversed, the form before is back."""
    previous = migration_module("dedup", "0011_entity_signatures_carry_lengths")
    before = ("dedup", "0010_candidates_functions_without_jit")
    try:
        _migrate(before)
        ada = Entity.objects.create(name="Ada Lovelace", kind="person", key="ada lovelace")
        countess = EntityAlias.objects.create(
            entity=ada, alias="The Countess", key="the countess", source="curator"
        )
        EntityAlias.objects.create(entity=ada, alias="ADA", key="ada", source="convergence")
        with connection.cursor() as cursor:
            for table, owner, owner_id, key in (
                ("palace_entitysignature", "entity_id", ada.pk, ada.key),
                ("palace_entityaliassignature", "alias_id", countess.pk, countess.key),
            ):
                for signature in previous._previous_key_signatures(key):
                    cursor.execute(
                        f"INSERT INTO {table} (signature, {owner}, key) VALUES (%s, %s, %s)",
                        [signature, owner_id, key],
                    )
        _migrate_to_the_latest()
        stored = set(EntitySignature.objects.values_list("signature", "entity"))
        assert stored == {(s, ada.pk) for s in key_signatures("ada lovelace")}
        indexed = set(EntityAliasSignature.objects.values_list("signature", "alias"))
        assert indexed == {(s, countess.pk) for s in key_signatures("the countess")}
        assert services.entity_resolve(name="Ada Lovelaze", kind="person").entity == ada
        converged = services.entity_resolve(name="The Countes", kind="person")
        assert converged.entity == ada

        _migrate(before)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT signature FROM palace_entitysignature WHERE entity_id = %s", [ada.pk]
            )
            assert {row[0] for row in cursor.fetchall()} == previous._previous_key_signatures(
                "ada lovelace"
            )
            cursor.execute("SELECT count(*) FROM palace_entityaliassignature")
            assert cursor.fetchone()[0] == len(previous._previous_key_signatures("the countess"))
    finally:
        _migrate_to_the_latest()


def test_the_previous_form_is_the_one_the_lookups_asked_before():
    """The reverse's copy of the form before: a long key's tags carried its length (a key of 12
    cut at 6), so none of its signatures is today's; a short key's tag never did, so its
    signatures are today's but for the low byte."""
    previous = migration_module("dedup", "0011_entity_signatures_carry_lengths")
    assert not previous._previous_key_signatures("ada lovelace") & key_signatures("ada lovelace")
    assert len(previous._previous_key_signatures("ada lovelace")) == len(
        key_signatures("ada lovelace")
    )
    without_length = {s & -256 for s in key_signatures("redis")}
    assert {s & -256 for s in previous._previous_key_signatures("redis")} == without_length


def migration_module(app: str, name: str):
    return importlib.import_module(f"{app}.migrations.{name}")


def _migrate_to_the_latest():
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
