"""Issue 10, items 18 and 20 through a curator's decisions: a sighting that reaches an entity
through a redirect records `alias`, and an alias a curator recorded serves the typo rule."""

import pytest

from dedup import services as write
from palace.models import Entity, EntityAlias
from review import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def drawer(dedup_settings):
    room = write.room_get_or_create(wing="w", room="r")
    return write.drawer_write(room=room, content="Notes about the people we met.").drawer


@pytest.mark.parametrize("decision", ["add_alias", "merge"])
def test_a_sighting_through_a_redirect_records_alias(entity_link, curator, drawer, decision):
    services.decide(item=f"e{entity_link.pk}", action=decision, actor=curator)
    written = write.mention_add(drawer=drawer, name="Katerino", kind="person")
    assert written.resolution.entity == entity_link.older
    assert written.resolution.rule == "alias"
    assert written.mention.observation["rule"] == "alias"
    assert written.mention.observation["confidence"] == 0.95


def test_a_sighting_of_the_canonical_name_stays_exact(entity_link, curator, drawer):
    services.decide(item=f"e{entity_link.pk}", action="merge", actor=curator)
    written = write.mention_add(drawer=drawer, name="Katarina", kind="person")
    assert written.mention.observation["rule"] == "exact"


def test_a_curators_alias_is_marked_and_serves_the_typo_rule(entity_link, curator, drawer):
    services.decide(item=f"e{entity_link.pk}", action="add_alias", actor=curator)
    recorded = EntityAlias.objects.get(alias="Katerino")
    assert recorded.source == EntityAlias.Source.CURATOR
    # "Katerinu": one edit from the curator's alias, two from the canonical name.
    written = write.mention_add(drawer=drawer, name="Katerinu", kind="person")
    assert written.resolution.entity == entity_link.older
    assert written.resolution.rule == "typo"
    assert Entity.objects.filter(name="Katerinu").count() == 0


def test_a_reverted_alias_no_longer_serves_the_typo_rule(entity_link, curator, dedup_settings):
    entry = services.decide(item=f"e{entity_link.pk}", action="add_alias", actor=curator)
    services.revert(decision=entry, actor=curator)
    assert write.entity_resolve(name="Katerinu", kind="person").entity != entity_link.older
