"""The statements a mention costs, per rule: pinned, so the service's own work stays small (issue
14). Inside the test's transaction the service's atomic block is one SAVEPOINT and its RELEASE;
the entity resolution takes no savepoint of its own. PostgreSQL adds the entity's advisory
lock (SQLite's IMMEDIATE transaction already holds the write lock), and before a signature
lookup the SET LOCAL that turns JIT off for it (dedup.candidates.owners_within_reach)."""

import pytest
from django.db import connection

from dedup import services
from dedup.services import entities as entities_service
from palace.models import Entity, EntityAlias, EntityLink, Mention

pytestmark = pytest.mark.django_db

SAVEPOINT = 2  # the SAVEPOINT and its RELEASE
LOOKUPS = 1  # the exact name, the key and an alias key: one UNION, with the aliases joined
DRAWER = 1  # the drawer held until commit
MENTION = 1  # INSERT ... ON CONFLICT DO NOTHING RETURNING id


def lock() -> int:
    return 1 if connection.vendor == "postgresql" else 0


def jit_off() -> int:
    return 1 if connection.vendor == "postgresql" else 0


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
    base = SAVEPOINT + lock() + LOOKUPS + DRAWER + MENTION
    written = mention(drawer, "Ada Lovelace", base, django_assert_num_queries)
    assert written.created
    assert written.resolution.entity == ada


def test_a_key_variant_adds_its_alias_in_one_statement(drawer, ada, django_assert_num_queries):
    alias = 1
    base = SAVEPOINT + lock() + LOOKUPS + DRAWER + MENTION
    mention(drawer, "ADA LOVELACE", base + alias, django_assert_num_queries)
    assert EntityAlias.objects.filter(entity=ada, alias="ADA LOVELACE").exists()


def test_a_known_alias_is_not_written_again(drawer, ada, django_assert_num_queries):
    services.mention_add(drawer=drawer, name="ADA LOVELACE", kind="person")
    other = services.drawer_write(room=drawer.room, content="Another note about Ada.").drawer
    base = SAVEPOINT + lock() + LOOKUPS + DRAWER + MENTION
    mention(other, "ADA LOVELACE", base, django_assert_num_queries)


def test_a_typo_reads_both_signature_tables_at_once(drawer, ada, django_assert_num_queries):
    signatures, entities, alias = 1, 1, 1  # (owner, key) pairs; the entities within reach
    base = (
        SAVEPOINT + lock() + jit_off() + LOOKUPS + signatures + entities + alias + DRAWER + MENTION
    )
    written = mention(drawer, "Ada Lovelaze", base, django_assert_num_queries)
    assert written.resolution.entity == ada
    assert written.resolution.rule == "typo"


def test_a_new_name_reads_no_entity(drawer, ada, django_assert_num_queries):
    signatures, entity, its_signatures = 1, 1, 1
    base = SAVEPOINT + lock() + jit_off() + LOOKUPS + signatures + entity + its_signatures
    written = mention(drawer, "Grace Hopper", base + DRAWER + MENTION, django_assert_num_queries)
    assert written.resolution.created


def test_a_new_name_like_another_links_it_in_one_statement(drawer, ada, django_assert_num_queries):
    services.entity_resolve(name="Ada Lovelass", kind="person")  # two near ones: no typo
    signatures, entities, entity, its_signatures, links = 1, 1, 1, 1, 1
    base = (
        SAVEPOINT
        + lock()
        + jit_off()
        + LOOKUPS
        + signatures
        + entities
        + entity
        + its_signatures
        + links
    )
    written = mention(drawer, "Ada Lovelacs", base + DRAWER + MENTION, django_assert_num_queries)
    assert written.resolution.created
    assert EntityLink.objects.filter(newer=written.resolution.entity).count() == 2


def test_a_mention_made_before_is_read_after_its_insert_does_nothing(
    drawer, ada, django_assert_num_queries
):
    first = services.mention_add(drawer=drawer, name="Ada Lovelace", kind="person")
    base = SAVEPOINT + lock() + LOOKUPS + DRAWER + MENTION
    read = 1  # the mention that is there
    again = mention(drawer, "Ada Lovelace", base + read, django_assert_num_queries)
    assert not again.created
    assert again.mention == first.mention
    assert Mention.objects.count() == 1


def test_an_entity_created_meanwhile_is_converged_on_not_duplicated(ada, monkeypatch):
    """A writer that took no lock created the name between our read and our insert: the insert
    does nothing, and the resolution, run again, finds it (no savepoint, no IntegrityError)."""
    real = entities_service.candidates.entities_named
    calls = []

    def first_misses(**kwargs):
        calls.append(kwargs)
        return [] if len(calls) == 1 else real(**kwargs)

    monkeypatch.setattr(entities_service.candidates, "entities_named", first_misses)
    exact_only = services.DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)
    resolution = services.entity_resolve(name="Ada Lovelace", kind="person", config=exact_only)
    assert len(calls) == 2
    assert resolution.entity == ada
    assert not resolution.created
    assert Entity.objects.count() == 1


def test_a_typo_of_a_name_and_of_its_alias_reads_both_in_one_statement(
    drawer, ada, django_assert_num_queries
):
    services.entity_alias_add(entity=ada, alias="Ada Lovelacey")  # a person recorded it
    signatures, entities_and_aliases, alias = 1, 1, 1
    base = SAVEPOINT + lock() + jit_off() + LOOKUPS + signatures + entities_and_aliases + alias
    written = mention(drawer, "Ada Lovelacy", base + DRAWER + MENTION, django_assert_num_queries)
    assert written.resolution.entity == ada
