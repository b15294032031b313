"""A sweep's entity lookups for a batch at once (`candidates.older_lookups`) find, for every
entity, exactly what the write path's lookups find for its name among the older entities, in a
constant number of statements whatever the batch's size."""

from __future__ import annotations

import random

import pytest
from django.db import connection, transaction
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from dedup import candidates, policy, services
from dedup.services.inserts import signatures_insert
from palace.models import Entity, EntityAlias, EntitySignature
from tests.dedup.policy.test_signatures import edited, random_key

pytestmark = pytest.mark.django_db

EXACT_ONLY = services.DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)
KINDS = ("person", "tool", policy.VAGUE_KIND)


def legacy(name: str, kind: str) -> Entity:
    """An entity stored as an import without deduplication leaves one, with its signatures."""
    key = policy.entity_key(name)
    entity = Entity.objects.create(name=name, kind=kind, key=key, key_length=len(key))
    signatures_insert(EntitySignature, "entity_id", entity.pk, key)
    return entity


@pytest.fixture
def entities(dedup_settings):
    """Clusters of near names written in random order (so a name's near ones are older or
    newer), with exact rules only (each name its own entity, or a convergence alias of one of
    its key), of specific and vague kinds; aliases a person recorded; a few redirected."""
    rng = random.Random(25)
    names: list[str] = []
    while len(names) < 300:
        base = random_key(rng)
        names += [base, *(edited(base, rng, rng.randint(1, 3)) for _ in range(rng.randint(0, 4)))]
        names.append(base.upper())  # the same key: converges, an alias by convergence
    rng.shuffle(names)
    for name in names:
        if name.strip():
            services.entity_resolve(name=name, kind=rng.choice(KINDS), config=EXACT_ONLY)
    stored = list(Entity.objects.order_by("pk"))
    for entity in rng.sample(stored, 40):
        services.entity_alias_add(entity=entity, alias=edited(entity.key, rng, 2) + "q")
    # Duplicates stored as an import without deduplication leaves them: the same key, or an
    # older entity's alias as a name of its own.
    spellings = [(e.name.upper(), e.kind) for e in rng.sample(stored, 40)]
    spellings += [(a.alias, a.entity.kind) for a in EntityAlias.objects.select_related("entity")]
    for name, kind in rng.sample(spellings, 60):
        if not Entity.objects.filter(name=name, kind=kind).exists():
            legacy(name, kind)
    for entity in rng.sample(stored[1:], 15):
        Entity.objects.filter(pk=entity.pk).update(redirect_to=stored[0])
    assert EntityAlias.objects.filter(source=EntityAlias.Source.CONVERGENCE).exists()
    return list(Entity.objects.filter(redirect_to__isnull=True).order_by("pk"))


class _Undone(Exception):
    pass


def one_by_one(entity: Entity) -> candidates.NameLookup:
    """What the write path's lookups (`name_lookup`, fuzzy; on PostgreSQL its function) find for
    the entity's name, had it and every newer entity never been stored: they are deleted in a
    savepoint rolled back after (an older entity redirected to one of them stays redirected)."""
    found = []
    try:
        with transaction.atomic():
            newer = Entity.objects.filter(pk__gte=entity.pk)
            Entity.objects.filter(pk__lt=entity.pk, redirect_to__in=newer).update(
                redirect_to=F("pk")
            )
            newer.update(redirect_to=None)
            EntityAlias.objects.filter(entity__in=newer).delete()
            newer.delete()
            found.append(
                candidates.name_lookup(
                    kind=entity.kind, name=entity.name, key=entity.key, fuzzy=True, lock=None
                )
            )
            raise _Undone
    except _Undone:
        pass
    return found[0]


def spelled(found: list[candidates.KnownEntity]) -> dict[int, list[str]]:
    return {known.entity.pk: sorted(known.aliases) for known in found}


def test_a_batch_finds_what_the_write_path_finds_for_each_name(entities):
    batch = candidates.older_lookups(entities)
    assert set(batch) == {entity.pk for entity in entities}
    named = reached = 0
    for entity in entities:
        alone = one_by_one(entity)
        assert spelled(batch[entity.pk].named) == spelled(alone.named), entity.name
        assert spelled(batch[entity.pk].reached) == spelled(alone.reached), entity.name
        named += bool(alone.named)
        reached += bool(alone.reached)
    # The store exercises both kinds of lookup, and reaches through person aliases.
    assert named > 20
    assert reached > 50
    assert any(known.aliases for lookup in batch.values() for known in lookup.reached)


UNUSUAL = ["a,b", 'a"b', "a'b", "a\\b", "{x}", "NULL", "%s", "$[0]", "rocket 😀", "日本語テキスト"]


@pytest.mark.parametrize("name", UNUSUAL)
def test_names_of_any_characters(dedup_settings, name):
    """Each name reaches the statements as a value: the same name, vague, finds its older
    entity; of another kind, nothing."""
    older = services.entity_resolve(name=name, kind="tool", config=EXACT_ONLY).entity
    services.entity_alias_add(entity=older, alias=f"{name} Q")
    vague, other_kind = legacy(name, policy.VAGUE_KIND), legacy(name, "person")
    batch = candidates.older_lookups([vague, other_kind])
    assert [known.entity.pk for known in batch[vague.pk].named] == [older.pk]
    assert batch[vague.pk].named[0].aliases == (f"{name} Q",)
    assert not batch[other_kind.pk].named
    assert spelled(batch[other_kind.pk].reached) == spelled(one_by_one(other_kind).reached)


def test_an_alias_reaches_only_through_a_current_entity(dedup_settings):
    alpha = services.entity_resolve(name="Alpha Centauri", kind="tool", config=EXACT_ONLY).entity
    beta = services.entity_resolve(name="Betelgeuse Star", kind="tool", config=EXACT_ONLY).entity
    services.entity_alias_add(entity=alpha, alias="Proxima Station")
    services.entity_alias_add(entity=beta, alias="Orion Shoulder")
    Entity.objects.filter(pk=beta.pk).update(redirect_to=alpha)
    typo_of_alias = legacy("Proxima Statoin", "tool")
    typo_of_redirected = legacy("Orion Shoudler", policy.VAGUE_KIND)
    batch = candidates.older_lookups([typo_of_alias, typo_of_redirected])
    assert [(k.entity.pk, k.aliases) for k in batch[typo_of_alias.pk].reached] == [
        (alpha.pk, ("Proxima Station",))
    ]
    assert not batch[typo_of_redirected.pk].reached


def test_entities_come_whole(entities):
    """The entities found are those of the table, as the ORM would read them."""
    found = [
        known.entity
        for lookup in candidates.older_lookups(entities).values()
        for known in [*lookup.named, *lookup.reached]
    ]
    assert found
    for entity in found[:50]:
        stored = Entity.objects.get(pk=entity.pk)
        assert (entity.name, entity.kind, entity.key, entity.uuid, entity.created_at) == (
            stored.name,
            stored.kind,
            stored.key,
            stored.uuid,
            stored.created_at,
        )


def test_a_batch_costs_the_same_statements_whatever_its_size(entities):
    """Three on PostgreSQL. On SQLite the signature lookups are one statement an entity asked
    within reach (a call in the process, measured faster than one for the batch), the others
    two whatever the size."""

    def statements(batch):
        with CaptureQueriesContext(connection) as queries:
            found = candidates.older_lookups(batch)
        signatures = [q for q in queries.captured_queries if "palace_entitysignature" in q["sql"]]
        asked = sum(not lookup.named for lookup in found.values())
        if connection.vendor == "postgresql":
            assert len(signatures) == min(asked, 1)
        else:
            assert len(signatures) == asked
        return len(queries) - len(signatures)

    assert statements(entities[:200]) == statements(entities[:20]) == 2
    assert statements(entities[-20:]) == 1  # each found older entities by name: no reach asked


def test_an_empty_batch_asks_nothing(dedup_settings, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert candidates.older_lookups([]) == {}
