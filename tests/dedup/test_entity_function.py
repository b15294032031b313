"""The PostgreSQL function castellan_entity_lookup answers exactly what the statements it
replaced answer (they still serve SQLite and sweeps): the exact lookups with every alias, or the
owners within reach, for any name, kind, and fuzzy matching on or off."""

import pytest
from django.db import connection, transaction

from dedup import candidates, policy, services
from dedup.candidates.entities import signed_owners_sql
from dedup.locks import lock_key
from dedup.policy.signatures import reach_range, reach_signatures
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
        return named, []
    entity_ids, alias_ids = candidates.owners_within_reach(key)
    return named, candidates.entities_of_owners(
        kind=kind, entity_ids=entity_ids, alias_ids=alias_ids
    )


def comparable(known):
    """Each entity's fields and spellings, by id (within reach, the order is the database's)."""
    return sorted(
        (
            [getattr(k.entity, f.attname) for f in Entity._meta.concrete_fields],
            sorted(k.aliases),
        )
        for k in known
    )


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
    reached_by_alias = set()
    for name in asked:
        key = policy.entity_key(name)
        for kind in KINDS:
            for fuzzy in (True, False):
                with transaction.atomic():
                    lookup = candidates.name_lookup(
                        kind=kind, name=name, key=key, fuzzy=fuzzy, lock=lock_key("entity", key)
                    )
                    expected = statements(kind, name, key, fuzzy)
                found = (lookup.named, lookup.reached)
                assert list(map(comparable, found)) == list(map(comparable, expected)), (
                    name,
                    kind,
                    fuzzy,
                )
                found_by.add((bool(lookup.named), bool(lookup.reached)))
                reached_by_alias |= {k.aliases for k in lookup.reached if k.aliases}
    # Every part of the answer was exercised: exact matches, entities and aliases in reach.
    assert (True, False) in found_by
    assert (False, True) in found_by
    assert reached_by_alias


def function_rows(name, kind):
    """(part, entity name, alias) of the rows the function returns for a name no exact lookup
    finds, with fuzzy matching on."""
    key = policy.entity_key(name)
    low, high = reach_range(key)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"SELECT part, name, known_alias FROM {candidates.ENTITY_FUNCTION_NAME}"
            "(NULL, %s, %s, %s, %s::bigint[], %s, %s) WHERE part <> %s",
            [
                *(name, key, kind, candidates.signatures_parameter(reach_signatures(key))),
                *(low, high, candidates.entities.BAND),
            ],
        )
        return sorted(cursor.fetchall())


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the function is PostgreSQL's")
def test_the_function_reads_only_entities_within_its_bound_of_the_kind_not_redirected(
    dedup_settings,
):
    """Every owner below shares a signature with the name asked; the function returns those
    whose key is within Levenshtein four (two OSA edits or more), of the kind, answering for
    themselves; Python keeps those within two OSA edits."""
    exact_only = services.DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)
    person = {
        name: services.entity_resolve(name=name, kind="person", config=exact_only).entity
        for name in ("Kalomen Tasvor", "Kalomen Txyzor", "Kalomen Qqqqqq", "Kalomen Tasvox")
    }
    services.entity_resolve(name="Kalomen Tasvoy", kind="tool")
    Entity.objects.filter(pk=person["Kalomen Tasvox"].pk).update(
        redirect_to=person["Kalomen Tasvor"], redirect_kind=Entity.Redirect.MERGE
    )
    services.entity_alias_add(entity=person["Kalomen Qqqqqq"], alias="Kalomen Tasvqz")
    asked = "Kalomen Tasvoz"
    key = policy.entity_key(asked)
    with connection.cursor() as cursor:
        cursor.execute(*signed_owners_sql(key, connection.vendor))
        signed = {owner for side, owner, _ in cursor.fetchall() if side == 0}
    assert signed >= {entity.pk for entity in person.values()}
    assert function_rows(asked, "person") == [
        (1, "Kalomen Tasvor", None),
        (1, "Kalomen Txyzor", None),  # four substitutions: within the bound, not within reach
        (2, "Kalomen Qqqqqq", "Kalomen Tasvqz"),
    ]
    with transaction.atomic():
        lookup = candidates.name_lookup(kind="person", name=asked, key=key, fuzzy=True, lock=None)
    reached = sorted((known.entity.name, known.aliases) for known in lookup.reached)
    assert reached == [("Kalomen Qqqqqq", ("Kalomen Tasvqz",)), ("Kalomen Tasvor", ())]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the function is PostgreSQL's")
def test_the_lookup_reads_the_counts_of_the_bands_a_new_entity_would_move(dedup_settings):
    """A name whose key has n characters reads the bands n, n + 1 and n + 2, each of which
    counts the entities created with a key of its length or up to two shorter (0 before any)."""
    length = len(services.entity_resolve(name="Ada Lovelace", kind="person").entity.key)
    shorter = "x" * (length - 1)
    with transaction.atomic():
        lookup = candidates.name_lookup(
            kind="person", name=shorter, key=shorter, fuzzy=True, lock=None
        )
    assert lookup.bands == {length - 1: 0, length: 1, length + 1: 1}
