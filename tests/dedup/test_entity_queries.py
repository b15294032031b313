"""The statements a mention costs, per rule: pinned, so the service's own work stays small (issue
14). Inside the test's transaction the service's atomic block is one SAVEPOINT and its RELEASE;
the entity resolution takes no savepoint of its own. On PostgreSQL one call of the function
castellan_entity_lookup_banded takes the entity's lock and runs the exact lookups and, if they miss,
the signature lookup and reads the entities within reach (SQLite's IMMEDIATE transaction already
holds the write lock, and its signature lookup and the entities within reach are a statement
each); a new entity, its signatures, its links and its
mention are one statement (one each on SQLite, which has no INSERT in a WITH), after its count in
the key bands on PostgreSQL. The mention's insert holds its drawer."""

import pytest
from django.db import connection

from dedup import candidates, services
from dedup.errors import InvalidInput, NotFound
from dedup.locks import lock_key
from dedup.services import entities as entities_service
from palace.models import Drawer, Entity, EntityAlias, EntityLink, Mention

pytestmark = pytest.mark.django_db

SAVEPOINT = 2  # the SAVEPOINT and its RELEASE
LOOKUPS = 1  # the exact name, the key and an alias key: one UNION, with the aliases joined
MENTION = 1  # INSERT ... SELECT the drawer held ... ON CONFLICT DO NOTHING RETURNING id


def postgresql() -> bool:
    return connection.vendor == "postgresql"


def signature_lookup() -> int:
    """The (owner, key) pairs of both signature tables: in the lookups' call on PostgreSQL."""
    return 0 if postgresql() else 1


def in_reach() -> int:
    """The entities within reach (and the aliases a person recorded), by primary key: in the
    lookups' call on PostgreSQL."""
    return 0 if postgresql() else 1


def creation(links: bool = False) -> int:
    """The entity, its signatures, (if any) its links and the mention that named it; on
    PostgreSQL after its count in the key bands (`dedup.locks.creations_meanwhile`)."""
    return 2 if postgresql() else 2 + links + MENTION


@pytest.fixture
def drawer(dedup_settings):
    room = services.room_get_or_create(wing="w", room="r")
    return services.drawer_write(room=room, content="Notes about the people we met.").drawer


@pytest.fixture
def ada(drawer):
    return services.entity_resolve(name="Ada Lovelace", kind="person").entity


def mention(drawer, name, expected, assert_num_queries, kind="person"):
    with assert_num_queries(expected):
        return services.mention_add(drawer=drawer, name=name, kind=kind)


def test_an_exact_name_reads_the_lookups_and_the_aliases_at_once(
    drawer, ada, django_assert_num_queries
):
    base = SAVEPOINT + LOOKUPS + MENTION
    written = mention(drawer, "Ada Lovelace", base, django_assert_num_queries)
    assert written.created
    assert written.resolution.entity == ada


def test_a_key_variant_adds_its_alias_in_one_statement(drawer, ada, django_assert_num_queries):
    alias = 1
    base = SAVEPOINT + LOOKUPS + MENTION
    mention(drawer, "ADA LOVELACE", base + alias, django_assert_num_queries)
    assert EntityAlias.objects.filter(entity=ada, alias="ADA LOVELACE").exists()


def test_a_known_alias_is_not_written_again(drawer, ada, django_assert_num_queries):
    services.mention_add(drawer=drawer, name="ADA LOVELACE", kind="person")
    other = services.drawer_write(room=drawer.room, content="Another note about Ada.").drawer
    base = SAVEPOINT + LOOKUPS + MENTION
    mention(other, "ADA LOVELACE", base, django_assert_num_queries)


def test_a_typo_reads_both_signature_tables_at_once(drawer, ada, django_assert_num_queries):
    alias = 1  # the spelling that converged
    base = SAVEPOINT + LOOKUPS + signature_lookup() + in_reach() + alias + MENTION
    written = mention(drawer, "Ada Lovelaze", base, django_assert_num_queries)
    assert written.resolution.entity == ada
    assert written.resolution.rule == "typo"


def test_a_new_name_reads_no_entity(drawer, ada, django_assert_num_queries):
    base = SAVEPOINT + LOOKUPS + signature_lookup() + creation()
    written = mention(drawer, "Grace Hopper", base, django_assert_num_queries)
    assert written.resolution.created
    assert written.created
    assert written.mention.entity == written.resolution.entity


def test_a_new_name_too_short_for_a_typo_or_a_resemblance_is_counted_in_no_band(
    drawer, ada, django_assert_num_queries
):
    base = SAVEPOINT + LOOKUPS + signature_lookup() + creation() - postgresql()
    written = mention(drawer, "Bob", base, django_assert_num_queries)
    assert written.resolution.created


def test_a_new_entity_s_mention_is_stored_as_the_sighting_that_named_it(drawer):
    """Written with the entity (on PostgreSQL in its statement): every column as the mention's
    own insert stored it."""
    written = services.mention_add(
        drawer=drawer, name=" Grace Hopper ", kind="person", provenance={"document": "a.md"}
    )
    stored = Mention.objects.get(pk=written.mention.pk)
    assert stored.entity_id == written.resolution.entity.pk
    assert stored.drawer_id == drawer.pk
    assert stored.observation == {"name": "Grace Hopper", "rule": "exact", "confidence": 1.0}
    assert stored.provenance == {"document": "a.md"}
    assert stored.created_at == written.mention.created_at


def test_a_new_name_like_another_links_it_in_one_statement(drawer, ada, django_assert_num_queries):
    services.entity_resolve(name="Ada Lovelass", kind="person")  # two near ones: no typo
    base = SAVEPOINT + LOOKUPS + signature_lookup() + in_reach() + creation(links=True)
    written = mention(drawer, "Ada Lovelacs", base, django_assert_num_queries)
    assert written.resolution.created
    assert EntityLink.objects.filter(newer=written.resolution.entity).count() == 2


def test_a_mention_made_before_is_read_after_its_insert_does_nothing(
    drawer, ada, django_assert_num_queries
):
    first = services.mention_add(drawer=drawer, name="Ada Lovelace", kind="person")
    base = SAVEPOINT + LOOKUPS + MENTION
    read = 1  # the mention that is there (its drawer is the one given, not read again)
    again = mention(drawer, "Ada Lovelace", base + read, django_assert_num_queries)
    assert not again.created
    assert again.mention == first.mention
    with django_assert_num_queries(0):
        assert again.mention.drawer.uuid == drawer.uuid
    assert Mention.objects.count() == 1


@pytest.fixture
def first_lookup_misses(monkeypatch):
    """The lookups' arguments, each call; the first finds nothing, as if the entity were created
    by a writer that took no lock between our read and our insert."""
    real = entities_service.candidates.name_lookup
    calls = []

    def first_misses(**kwargs):
        calls.append(kwargs)
        return candidates.NameLookup([], []) if len(calls) == 1 else real(**kwargs)

    monkeypatch.setattr(entities_service.candidates, "name_lookup", first_misses)
    return calls


def test_an_entity_created_meanwhile_is_converged_on_not_duplicated(ada, first_lookup_misses):
    """A writer that took no lock created the name between our read and our insert: the insert
    does nothing, and the resolution, run again, finds it (no savepoint, no IntegrityError)."""
    exact_only = services.DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)
    resolution = services.entity_resolve(name="Ada Lovelace", kind="person", config=exact_only)
    calls = first_lookup_misses
    assert len(calls) == 2
    assert calls[0]["lock"] == lock_key("entity", "ada lovelace")
    assert calls[1]["lock"] is None, "the lock is held already: not asked again"
    assert resolution.entity == ada
    assert not resolution.created
    assert Entity.objects.count() == 1


def test_a_mention_whose_new_entity_was_created_meanwhile_records_one_mention(
    drawer, ada, first_lookup_misses
):
    """The entity's insert (with the mention, on PostgreSQL) does nothing, as it was created by a
    writer that took no lock: the resolution, run again, converges on it and the mention is
    recorded once, by its own insert."""
    written = services.mention_add(drawer=drawer, name="Ada Lovelace", kind="person")
    assert len(first_lookup_misses) == 2
    assert not written.resolution.created
    assert written.created
    assert list(Mention.objects.values_list("drawer_id", "entity_id")) == [(drawer.pk, ada.pk)]
    assert Mention.objects.get().observation["rule"] == "exact"
    assert Entity.objects.count() == 1


def test_a_name_that_is_not_a_string_is_bad_input_and_writes_nothing(drawer):
    with pytest.raises(InvalidInput):
        services.mention_add(drawer=drawer, name=None, kind="person")  # type: ignore[arg-type]
    assert not Mention.objects.exists()


def test_a_typo_of_a_name_and_of_its_alias_reads_both_in_one_statement(
    drawer, ada, django_assert_num_queries
):
    services.entity_alias_add(entity=ada, alias="Ada Lovelacey")  # a person recorded it
    alias = 1
    base = SAVEPOINT + LOOKUPS + signature_lookup() + in_reach() + alias
    written = mention(drawer, "Ada Lovelacy", base + MENTION, django_assert_num_queries)
    assert written.resolution.entity == ada


def test_a_mention_of_a_drawer_deleted_meanwhile_is_not_found_and_writes_nothing(drawer):
    """The mention's insert, which holds the drawer, inserts nothing: the drawer is looked up
    only then, and the entity its resolution created goes with the transaction."""
    gone = Drawer.objects.get(pk=drawer.pk)
    Drawer.objects.filter(pk=drawer.pk).delete()
    with pytest.raises(NotFound) as raised:
        services.mention_add(drawer=gone, name="Grace Hopper", kind="person")
    assert raised.value.code == "drawer_not_found"
    assert not Entity.objects.filter(name="Grace Hopper").exists()
    assert not Mention.objects.exists()


def test_a_known_names_mention_of_a_drawer_deleted_meanwhile_is_not_found(drawer, ada):
    """The name resolves to a known entity; the mention's insert finds no drawer to hold and no
    mention made before: the drawer is gone, and nothing is written."""
    gone = Drawer.objects.get(pk=drawer.pk)
    Drawer.objects.filter(pk=drawer.pk).delete()
    with pytest.raises(NotFound) as raised:
        services.mention_add(drawer=gone, name="Ada Lovelace", kind="person")
    assert raised.value.code == "drawer_not_found"
    assert not Mention.objects.exists()


def test_the_entities_read_by_hand_are_those_the_orm_reads(ada):
    """The lookups build entities from their columns (not `raw()`): each field holds what the
    ORM reads, typed (SQLite hands back the uuid and the time as text), and the row is saved."""
    alias = EntityAlias.objects.create(
        entity=ada, alias="Countess Lovelace", key="countess lovelace", source="api"
    )
    stored = Entity.objects.get(pk=ada.pk)
    named = candidates.entities_named(kind="person", name="Ada Lovelace", key=ada.key)
    by_entity = candidates.entities_of_owners(kind="person", entity_ids=[ada.pk], alias_ids=[])
    by_alias = candidates.entities_of_owners(kind="person", entity_ids=[], alias_ids=[alias.pk])
    assert [known.aliases for known in (*named, *by_entity, *by_alias)] == [
        ("Countess Lovelace",),
        (),
        ("Countess Lovelace",),
    ]
    for known in (*named, *by_entity, *by_alias):
        for field in Entity._meta.concrete_fields:
            read, expected = getattr(known.entity, field.attname), getattr(stored, field.attname)
            assert (type(read), read) == (type(expected), expected), field.name
        assert known.entity._state.adding is False
        assert known.entity._state.db == "default"


def test_the_converters_found_for_a_connection_go_with_it():
    """Kept on the connection they were found for, not in a cache beside it that would keep the
    connection of every thread that ended alive (MCP tool calls run on worker threads)."""
    import gc
    import weakref

    from django.db import connections

    from dedup.candidates import entities as entity_candidates

    db = connections.create_connection("default")  # a connection of its own, never opened
    found = entity_candidates._entity_converters(db)
    assert found is entity_candidates._entity_converters(db)  # found once
    gone = weakref.ref(db)
    del db, found
    gc.collect()
    assert gone() is None
