"""The PostgreSQL function castellan_entity_candidates answers exactly what the statements it
replaced answer (they still serve SQLite and sweeps): the exact lookups with every alias, or the
owners within reach, for any name, kind, and fuzzy matching on or off."""

import pytest
from django.db import connection, transaction

from dedup import candidates, policy, services
from dedup.locks import lock_key
from palace.models import Entity

pytestmark = pytest.mark.django_db

NAMES = [
    "Ada Lovelace",
    "O'Brien",
    'Say "hi"',
    "back\\slash",
    "Zoë Ångström",
    "Straße",
    "日本語の名前",
    "emoji 🎉 party",
    "50% off",
    "percent %s here",
    "{curly}",
    "NULL",
    "E'escape'",
    "dash -- comment",
]
KINDS = ["person", "tool", "other"]


def test_the_function_returns_the_columns_the_code_reads():
    """Its entity columns are the model's concrete fields, in order (a field added to the model
    needs a new function)."""
    fields = tuple(field.attname for field in Entity._meta.concrete_fields)
    assert fields == candidates.entities.ENTITY_FUNCTION_FIELDS


def statements(kind, name, key, fuzzy):
    """What the statements the function replaced find (the SQLite path)."""
    named = candidates.entities_named(kind=kind, name=name, key=key)
    if named or not fuzzy:
        return named, [], []
    return (named, *candidates.owners_within_reach(key))


def comparable(named, entity_ids, alias_ids):
    entities = [
        ({f.attname: getattr(k.entity, f.attname) for f in Entity._meta.concrete_fields}, k.aliases)
        for k in named
    ]
    return entities, sorted(entity_ids), sorted(alias_ids)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the function is PostgreSQL's")
def test_the_function_finds_what_the_statements_find(dedup_settings):
    for index, name in enumerate(NAMES):
        entity = services.entity_resolve(name=name, kind=KINDS[index % 2]).entity
        if index % 3 == 0:  # an alias a person recorded, with its signatures
            services.entity_alias_add(entity=entity, alias=f"{name} alias")
    services.entity_resolve(name="Ada Lovelace", kind="tool")  # one name, two kinds
    asked = [*NAMES, *(f"{n}z" for n in NAMES), *(n.upper() for n in NAMES)]
    asked += [f"{n} aliaz" for n in NAMES]
    found_by = set()
    for name in asked:
        key = policy.entity_key(name)
        for kind in KINDS:
            for fuzzy in (True, False):
                with transaction.atomic():
                    lookup = candidates.name_lookup(
                        kind=kind, name=name, key=key, fuzzy=fuzzy, lock=lock_key("entity", key)
                    )
                    expected = statements(kind, name, key, fuzzy)
                found = (lookup.named, lookup.entity_ids, lookup.alias_ids)
                assert comparable(*found) == comparable(*expected), (name, kind, fuzzy)
                found_by.add(tuple(bool(part) for part in found))
    # Every part of the answer was exercised: exact matches, entities and aliases in reach.
    assert (True, False, False) in found_by
    assert (False, True, False) in found_by
    assert any(alias_ids for _, _, alias_ids in found_by)
