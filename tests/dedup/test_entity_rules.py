"""Issue 10, items 18-20: what a sighting records of how it reached its entity, which aliases
serve the typo rule, and how a bad kind is refused."""

import pytest

from dedup import services
from dedup.errors import EmptyLabel, InvalidInput
from palace.models import Drawer, Entity, EntityAlias, EntityLink, Mention

pytestmark = pytest.mark.django_db


@pytest.fixture
def drawer(dedup_settings):
    room = services.room_get_or_create(wing="w", room="r")
    return services.drawer_write(room=room, content="Notes about the people we met.").drawer


# --- item 18: the observation says how the sighting reached its entity ------------------------


def test_a_mention_that_creates_its_entity_records_exact(drawer):
    written = services.mention_add(drawer=drawer, name="  Ada Lovelace ", kind="person")
    assert written.resolution.created is True
    observation = written.mention.observation
    assert observation["rule"] == "exact"
    assert observation["confidence"] == 1.0
    assert observation["name"] == written.resolution.entity.name == "Ada Lovelace"


# --- item 19: a blank kind is empty_label, a malformed one invalid ----------------------------


@pytest.mark.parametrize("kind", [" ", "  \t "])
def test_a_blank_kind_is_an_empty_label(drawer, kind):
    with pytest.raises(EmptyLabel) as raised:
        services.mention_add(drawer=drawer, name="Ada", kind=kind)
    assert raised.value.details == {"field": "kind"}
    assert not Entity.objects.exists()
    assert not Mention.objects.exists()


@pytest.mark.parametrize("kind", ["Bad Kind", "9lives", "x" * 33, "per son", 5])
def test_a_malformed_kind_is_invalid(drawer, kind):
    with pytest.raises(InvalidInput) as raised:
        services.mention_add(drawer=drawer, name="Ada", kind=kind)
    assert raised.value.code == "invalid"
    assert not Entity.objects.exists()


def test_a_blank_drawer_kind_is_an_empty_label(dedup_settings):
    room = services.room_get_or_create(wing="w", room="r")
    with pytest.raises(EmptyLabel):
        services.drawer_write(room=room, content="Some text.", kind="   ")
    assert not Drawer.objects.exists()


# --- item 20: a typo of an alias a person recorded converges; an automatic one never does -----


def test_a_typo_of_an_alias_recorded_through_the_api_converges(drawer):
    ada = services.entity_resolve(name="Ada", kind="person").entity
    services.entity_alias_add(entity=ada, alias="Lovelace")
    assert EntityAlias.objects.get(alias="Lovelace").source == EntityAlias.Source.API
    written = services.mention_add(drawer=drawer, name="Lovelase", kind="person")
    assert written.resolution.entity == ada
    assert written.resolution.rule == "typo"
    assert written.resolution.confidence == pytest.approx(7 / 8)
    assert Entity.objects.count() == 1


def test_a_typo_of_an_alias_a_convergence_recorded_never_converges(dedup_settings):
    surreal = services.entity_resolve(name="SurrealDB", kind="tool").entity
    assert services.entity_resolve(name="SurealDB", kind="tool").rule == "typo"
    automatic = EntityAlias.objects.get(alias="SurealDB")
    assert automatic.source == EntityAlias.Source.CONVERGENCE
    # One edit from the automatic alias, two from the name: no drift.
    drifted = services.entity_resolve(name="SuealDB", kind="tool")
    assert drifted.created is True
    assert drifted.entity != surreal


def test_a_five_character_alias_never_serves_the_typo_rule(dedup_settings):
    ada = services.entity_resolve(name="Ada Lovelace", kind="person").entity
    services.entity_alias_add(entity=ada, alias="Marte")
    assert services.entity_resolve(name="Marta", kind="person").created is True


def test_person_aliases_of_two_entities_one_edit_away_converge_on_neither(dedup_settings):
    ada = services.entity_resolve(name="Ada", kind="person").entity
    grace = services.entity_resolve(name="Grace", kind="person").entity
    services.entity_alias_add(entity=ada, alias="Johnson")
    services.entity_alias_add(entity=grace, alias="Johnsen")
    result = services.entity_resolve(name="Johnsin", kind="person")
    assert result.created is True
    assert {link.older_id for link in result.possible} == {ada.pk, grace.pk}


def test_an_entity_of_another_kind_is_not_reached_through_its_person_alias(dedup_settings):
    hammer = services.entity_resolve(name="Hammer", kind="tool").entity
    services.entity_alias_add(entity=hammer, alias="Sledgehammer")
    assert services.entity_resolve(name="Sledgehamer", kind="person").created is True
    assert services.entity_resolve(name="Sledgehamer", kind="tool").entity == hammer


def test_the_links_a_new_entity_returns_are_the_rows_stored(dedup_settings):
    """Each possibly_same_as link a new entity returns is the row stored for its older entity,
    with its id, similarity and distance."""
    ada = services.entity_resolve(name="Ada", kind="person").entity
    grace = services.entity_resolve(name="Grace", kind="person").entity
    services.entity_alias_add(entity=ada, alias="Johnson")
    services.entity_alias_add(entity=grace, alias="Johnsen")
    result = services.entity_resolve(name="Johnsin", kind="person")
    stored = {
        link.pk: (link.newer_id, link.older_id, link.similarity, link.distance, link.status)
        for link in EntityLink.objects.filter(newer=result.entity)
    }
    returned = {
        link.pk: (link.newer_id, link.older_id, link.similarity, link.distance, link.status)
        for link in result.possible
    }
    assert returned == stored
    assert all(link._state.adding is False for link in result.possible)


def test_a_name_one_digit_from_another_gets_a_possible_link_not_an_alias(drawer):
    """From a curator's trial: "Server 2" had become an alias of "Server 1" with no review."""
    first = services.mention_add(drawer=drawer, name="Server 1", kind="tool").resolution.entity
    second = services.mention_add(drawer=drawer, name="Server 2", kind="tool").resolution.entity
    assert second.pk != first.pk
    assert not EntityAlias.objects.filter(entity=first).exclude(alias="Server 1").exists()
    assert EntityLink.objects.filter(newer=second, older=first).exists()


def test_a_name_whose_same_key_entity_differs_in_numbers_still_reaches_its_typo(drawer):
    """A fresh-eyes review: "Release 1.2" keys as "release 12", which names the entity
    "Release 12"; its numbers differ, so it does not converge there, and the lookup, having
    named one, had not read the entities within reach ("Relase 1.2", a typo of it)."""
    services.mention_add(drawer=drawer, name="Release 12", kind="tool")
    typo = services.mention_add(drawer=drawer, name="Relase 1.2", kind="tool").resolution.entity
    reached = services.mention_add(drawer=drawer, name="Release 1.2", kind="tool").resolution
    assert reached.entity.pk == typo.pk
    assert Entity.objects.count() == 2
