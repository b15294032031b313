"""Entity candidates: the entities a sighted name may resolve to, from indexed lookups. Like the
drawer queries beside them, they hold no matching rule: `dedup.policy.resolve` judges.

The exact lookups (name, key, alias key) are three indexed lookups in a UNION. The typo and
resemblance lookups ask the signature tables (`dedup.policy.signatures`): every entity whose key,
or the key of an alias a person recorded, is within two edits of the name's stores a signature
the name asks, plus its key's length (in the range the name's length allows). The tables hold
the owner's key beside each signature, so the lookup keeps exactly the owners within two edits
(the set the policy may find close) before any entity is read, by primary key; on PostgreSQL the
lookup's function reads them in the same call, those within a looser bound (Levenshtein four),
and Python keeps those within two edits."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import QuerySet

from dedup.candidates.entity_function import (
    ENTITY_FUNCTION_FIELDS,
    ENTITY_FUNCTION_NAME,
    signatures_parameter,
)
from dedup.database import default_connection
from dedup.locks import hold_lock
from dedup.policy import VAGUE_KIND
from dedup.policy.signatures import indexes_within_reach, reach_range, reach_signatures
from palace.models import (
    PERSON_ALIAS_SOURCES,
    Entity,
    EntityAlias,
    EntityAliasSignature,
    EntitySignature,
)

# What the typo rule reads of an entity: a redirected one answers through its canonical one.
ENTITY_FIELDS = ("id", "name", "kind", "key", "redirect_to")


@dataclass(frozen=True, slots=True)
class KnownEntity:
    """An entity the write path read, whole, with the spellings it read beside it: all its
    aliases (the exact lookups), or the aliases a person recorded that are within reach (the
    typo lookup)."""

    entity: Entity
    aliases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NameLookup:
    """What a sighted name may resolve to: the entities the exact lookups found, each with all
    its aliases; or, when they found none and fuzzy matching asked for them, the entities (of
    the kind, not redirected) whose key, or the key of an alias a person recorded, is within
    two edits (OSA) of the name's, each with those aliases (`entities_of_owners` of
    `owners_within_reach`)."""

    named: list[KnownEntity]
    reached: list[KnownEntity]
    # PostgreSQL: the creations counted in each key band a new entity of the name would move,
    # read before the lookups (`dedup.locks.creations_meanwhile`); None on SQLite.
    bands: dict[int, int] | None = None


# The columns `castellan_entity_lookup_banded` returns: which part of it a row is, then an
# entity's concrete fields (ENTITY_FUNCTION_FIELDS, in order; tests/dedup/test_entity_function.py
# holds them equal to the model's), then an alias and (part 2) its key. A band's row (part 3)
# holds its count in the id and its length in the key's length.
EXACT, SIGNED_ENTITY, SIGNED_ALIAS, BAND = 0, 1, 2, 3
_ENTITY = slice(1, 1 + len(ENTITY_FUNCTION_FIELDS))
_KEY, _ALIAS, _ALIAS_KEY = 1 + ENTITY_FUNCTION_FIELDS.index("key"), _ENTITY.stop, _ENTITY.stop + 1
_KEY_LENGTH = 1 + ENTITY_FUNCTION_FIELDS.index("key_length")


def name_lookup(*, kind: str, name: str, key: str, fuzzy: bool, lock: int | None) -> NameLookup:
    """The entity's lock (`dedup.locks.lock_key`; None if held already), then `entities_named`,
    then, if it found none and `fuzzy`, the entities within reach: on PostgreSQL one call of the
    function `castellan_entity_lookup_banded` (one round trip instead of five), elsewhere (SQLite)
    one to three statements (its IMMEDIATE transaction holds the write lock already)."""
    db = default_connection()
    if db.vendor != "postgresql":
        if lock is not None:
            hold_lock(lock)
        named = entities_named(kind=kind, name=name, key=key)
        if named or not fuzzy:
            return NameLookup(named, [])
        return NameLookup([], known_within_reach(kind, key))
    # A programming error: a lock taken outside a transaction is gone with the statement.
    if lock is not None and not db.in_atomic_block:  # pragma: no cover
        raise RuntimeError("name_lookup() takes a lock only inside a transaction.")
    low, high = reach_range(key)
    asked = signatures_parameter(reach_signatures(key)) if fuzzy else None
    with db.cursor() as cursor:
        cursor.execute(
            f"SELECT * FROM {ENTITY_FUNCTION_NAME}(%s::bigint, %s::text, %s::text, %s::text, "
            "%s::bigint[], %s::bigint, %s::bigint)",
            [lock, name, key, None if kind == VAGUE_KIND else kind, asked, low, high],
        )
        rows = cursor.fetchall()
    bands = {row[_KEY_LENGTH]: row[1] for row in rows if row[0] == BAND}
    rows = [row for row in rows if row[0] != BAND]
    if rows and rows[0][0] == EXACT:
        named = known_by_entity((entity_of(row[_ENTITY], db), row[_ALIAS]) for row in rows)
        return NameLookup(named, [], bands)
    # The function kept the owners within a looser bound; within reach is judged here.
    keys = [row[_KEY] if row[0] == SIGNED_ENTITY else row[_ALIAS_KEY] for row in rows]
    reached = (rows[index] for index in indexes_within_reach(key, keys))
    found = known_by_entity((entity_of(row[_ENTITY], db), row[_ALIAS]) for row in reached)
    return NameLookup([], found, bands)


def known_within_reach(kind: str, key: str) -> list[KnownEntity]:
    """`name_lookup`'s find when it names none; asked apart when the named do not converge."""
    entity_ids, alias_ids = owners_within_reach(key)
    return entities_of_owners(kind=kind, entity_ids=entity_ids, alias_ids=alias_ids)


def entities_named(*, kind: str, name: str, key: str) -> list[KnownEntity]:
    """`entities_matching` with every alias of each, in one hand-written statement (the same
    three indexed lookups in a UNION, the aliases joined by their entity's index): the ORM's
    compilation of the UNION and of the prefetch cost more than the lookups themselves."""
    table, aliases = Entity._meta.db_table, EntityAlias._meta.db_table
    sql = (
        f"SELECT {entity_columns()}, a.alias AS known_alias FROM {table} e "
        f"LEFT JOIN {aliases} a ON a.entity_id = e.id WHERE e.id IN ("
        f"SELECT id FROM {table} WHERE name = %s UNION SELECT id FROM {table} WHERE key = %s "
        f"UNION SELECT entity_id FROM {aliases} WHERE key = %s)"
    )
    params: list[Any] = [name, key, key]
    if kind != VAGUE_KIND:
        sql, params = sql + " AND e.kind = %s", [*params, kind]
    return _known_rows(f"{sql} ORDER BY e.id, a.id", params)


def entities_of_owners(
    *, kind: str, entity_ids: Sequence[int], alias_ids: Sequence[int]
) -> list[KnownEntity]:
    """The entities `owners_within_reach` named (of the kind, not redirected), each with the
    aliases it named if a person recorded them: `entities_by_id` and `person_aliases_by_id`
    in one hand-written statement (`owners_sql`); none when no owner is named."""
    sql, params = owners_sql(set(entity_ids), set(alias_ids), kind)
    return _known_rows(sql, params) if sql else []


def owners_sql(
    entity_ids: set[int], alias_ids: set[int], kind: str = VAGUE_KIND
) -> tuple[str, list[Any]]:
    """The statement reading these entities (of the kind, not redirected) and the aliases among
    these a person recorded (of such an entity): a UNION ALL of the two primary key reads, each
    row an entity's concrete fields (`entity_columns`), then the alias and its id (NULL for an
    entity's own row). ("", []) when no id is given."""
    table, aliases = Entity._meta.db_table, EntityAlias._meta.db_table
    kind_sql, kind_params = ("", []) if kind == VAGUE_KIND else (" AND e.kind = %s", [kind])
    branches: list[str] = []
    params: list[Any] = []
    if entity_ids:
        where, asked = ids_among("e.id", entity_ids)
        branches.append(
            f"SELECT {entity_columns()}, CAST(NULL AS TEXT), CAST(NULL AS BIGINT) FROM {table} e "
            f"WHERE {where} AND e.redirect_to_id IS NULL{kind_sql}"
        )
        params += [*asked, *kind_params]
    if alias_ids:
        where, asked = ids_among("a.id", alias_ids)
        sources = ", ".join(["%s"] * len(PERSON_ALIAS_SOURCES))
        branches.append(
            f"SELECT {entity_columns()}, a.alias, a.id FROM {aliases} a "
            f"JOIN {table} e ON e.id = a.entity_id WHERE {where} AND a.source IN ({sources}) "
            f"AND e.redirect_to_id IS NULL{kind_sql}"
        )
        params += [*asked, *(str(source) for source in PERSON_ALIAS_SOURCES), *kind_params]
    return " UNION ALL ".join(branches), params


def entity_columns() -> str:
    return ", ".join(f"e.{field.column}" for field in Entity._meta.concrete_fields)


_PLACEHOLDERS_MAX = 64  # SQLite: 2 to 5 us cheaper than JSON for 1 to 40 ids (alternating)


def ids_among(column: str, ids: Iterable[int]) -> tuple[str, list[Any]]:
    """`column` among the ids, whatever their number: on PostgreSQL `= ANY` of one array
    parameter written as one string (`signatures_parameter`; psycopg's own list adaptation
    measured 16 us dearer for a single id); on SQLite a placeholder each for a few, else one
    JSON array (a sweep's batch may ask more ids than SQLite allows variables)."""
    ordered = sorted(ids)
    if default_connection().vendor == "postgresql":
        return f"{column} = ANY(%s::bigint[])", [signatures_parameter(ordered)]
    if len(ordered) <= _PLACEHOLDERS_MAX:
        return f"{column} IN ({', '.join(['%s'] * len(ordered))})", ordered
    return f"{column} IN (SELECT value FROM json_each(%s))", [json.dumps(ordered)]


def _known_rows(sql: str, params: list[Any]) -> list[KnownEntity]:
    """`known_by_entity` of the rows of a statement selecting every concrete field of an entity
    (`entity_columns`), then one alias or NULL (`entities_named`; `owners_sql` reads the alias's
    id after it). Not `Manager.raw()`: on a lookup that finds
    one entity or none, building the raw query's column map cost more than the statement (55 us
    against 36 on SQLite)."""
    db = default_connection()
    with db.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    fields = len(ENTITY_FUNCTION_FIELDS)  # the entity's, then its alias (or NULL), then any
    return known_by_entity((entity_of(row[:fields], db), row[fields]) for row in rows)


def entity_of(values: Sequence[Any], db: BaseDatabaseWrapper) -> Entity:
    """The entity whose concrete fields' columns (ENTITY_FUNCTION_FIELDS, in order) hold these
    values, made as the ORM makes it (`Model.from_db`, after the backend's and the fields'
    converters: SQLite hands back a uuid or a datetime as text)."""
    converted = list(values)
    for index, functions, column in _entity_converters(db):
        value = converted[index]
        for function in functions:
            value = function(value, column, db)
        converted[index] = value
    return Entity.from_db(db.alias, ENTITY_FUNCTION_FIELDS, converted)


def _entity_converters(db: BaseDatabaseWrapper) -> list[tuple[int, list[Any], Any]]:
    """Per concrete field of an entity that has any: its index, the functions turning the
    database's value into the field's, and the column they are called with, as the ORM's
    compiler finds them (`SQLCompiler.get_converters`: the backend's, then the field's). Found
    once per connection (finding them cost 72 us, twice the lookup) and kept on it, so they go
    with it: the backend's converters are its methods, and a cache outside it (a module's
    `lru_cache` by its `ops`) kept the connection of every thread that had ended alive."""
    found = db.__dict__.get(_CONVERTERS)
    if found is None:
        found = []
        for index, field in enumerate(Entity._meta.concrete_fields):
            column = field.get_col(Entity._meta.db_table)
            functions = [*db.ops.get_db_converters(column), *column.get_db_converters(db)]
            if functions:
                found.append((index, functions, column))
        setattr(db, _CONVERTERS, found)
    return found


_CONVERTERS = "_castellan_entity_converters"


def known_by_entity(rows: Iterable[tuple[Entity, str | None]]) -> list[KnownEntity]:
    """Rows of (entity, one alias or None) grouped by entity, in the order they came."""
    entities: dict[int, Entity] = {}
    spellings: dict[int, list[str]] = {}
    for row, alias in rows:
        entity = entities.setdefault(row.pk, row)
        found = spellings.setdefault(entity.pk, [])
        if alias is not None:
            found.append(alias)
    return [KnownEntity(entity, tuple(spellings[pk])) for pk, entity in entities.items()]


def entities_matching(*, kind: str, name: str, key: str) -> QuerySet[Entity]:
    """Entities with this exact name, this key, or an alias with this key: one indexed lookup
    each (the name's unique index, the key's, the alias key's), as a UNION of ids."""
    matching_ids = (
        Entity.objects.filter(name=name)
        .order_by()
        .values("id")
        .union(
            Entity.objects.filter(key=key).order_by().values("id"),
            EntityAlias.objects.filter(key=key).order_by().values("entity_id"),
        )
    )
    queryset = Entity.objects.filter(pk__in=matching_ids)
    if kind != VAGUE_KIND:
        queryset = queryset.filter(kind=kind)
    return queryset.prefetch_related("alias_set")


# Whether this thread is inside an `entity_lookups` block (its transaction has JIT off).
_JIT_OFF: ContextVar[bool] = ContextVar("entity_lookups_jit_off", default=False)


@contextmanager
def entity_lookups() -> Iterator[None]:
    """Where signature lookups run: on PostgreSQL a transaction with JIT off (the caller's, or
    one of its own), on SQLite nothing (a transaction there would take the write lock). A
    caller making many lookups, a sweep's batch, opens it once around them all.

    The planner cannot estimate a range whose bounds come from the other side of the join, so
    from 100,000 entities it costs the few dozen searches of a lookup in the millions and
    compiled them at every call: 30 ms a lookup instead of 1.5 (bench/entities.py). A SET in
    the transaction holds whatever pools the connections; a connection option would not
    survive a pooler that drops it. Inside such a block, a lookup's own joins it without a SET
    (the setting lasts until the transaction ends)."""
    db = default_connection()
    if db.vendor != "postgresql" or _JIT_OFF.get():
        yield
        return
    with transaction.atomic(savepoint=False):
        with db.cursor() as cursor:
            cursor.execute("SET LOCAL jit = off")
        token = _JIT_OFF.set(True)
        try:
            yield
        finally:
            _JIT_OFF.reset(token)


def owners_within_reach(key: str) -> tuple[list[int], list[int]]:
    """The entities, and the aliases a person recorded, whose key is within two edits (OSA) of
    this one: exactly those, and none that are not. One statement reads (owner, key) pairs
    from the signature indexes alone (covering: palace/0012), in `entity_lookups`; the keys
    are judged here, so no entity that is not within reach is ever read."""
    db = default_connection()
    with entity_lookups(), db.cursor() as cursor:
        cursor.execute(*signed_owners_sql(key, db.vendor))
        return in_reach(key, cursor.fetchall())


def in_reach(key: str, signed: Iterable[tuple[int, int, str]]) -> tuple[list[int], list[int]]:
    """The entities (side 0) and aliases (side 1) of the (side, owner, owner's key) rows a
    signature lookup returned whose key is within two edits of this one."""
    # UNION ALL: an owner shares several signatures with the name; each is judged once.
    keys = {(side, owner): owner_key for side, owner, owner_key in signed}
    owned = list(keys)
    owners: tuple[list[int], list[int]] = ([], [])
    for index in indexes_within_reach(key, list(keys.values())):
        side, owner = owned[index]
        owners[side].append(owner)
    return owners


def signed_owners_sql(key: str, vendor: str) -> tuple[str, list[Any]]:
    """The (side, owner, key) of every stored signature that is one the key asks
    (`reach_signatures`) plus a length within its `reach_range`, from both tables: per
    signature asked, one search of the primary key and the short range after it
    (`dedup.policy.signatures`: the length is the low byte). Written by hand, as the ORM's
    compilation of a few dozen parameters cost more than the lookup itself. The signatures are
    one parameter, the outer side of the join: an array on PostgreSQL, a JSON array SQLite's
    json_each reads (CROSS JOIN keeps it outer) rather than dozens of bound values."""
    signed, lengths = reach_signatures(key), reach_range(key)
    asked: list[Any]
    if vendor == "postgresql":
        asked_from, join, base = (
            "unnest(%s::bigint[]) AS asked(signature)",
            "JOIN",
            "asked.signature",
        )
        asked = [signatures_parameter(signed), *lengths]
    else:
        asked_from, join, base = "json_each(%s) AS asked", "CROSS JOIN", "asked.value"
        asked = [json.dumps(list(signed)), *lengths]
    branches = [
        f"SELECT {side}, {table}.{owner}, {table}.key FROM {asked_from} {join} {table} "
        f"ON {table}.signature BETWEEN {base} + %s AND {base} + %s"
        for side, table, owner in (
            (0, EntitySignature._meta.db_table, "entity_id"),
            (1, EntityAliasSignature._meta.db_table, "alias_id"),
        )
    ]
    return " UNION ALL ".join(branches), asked + asked


def entities_by_id(*, kind: str, ids: list[int]) -> QuerySet[Entity]:
    """These entities (by primary key), of the kind, not redirected; no query when none."""
    if not ids:
        return Entity.objects.none()
    queryset = Entity.objects.filter(pk__in=ids, redirect_to__isnull=True)
    if kind != VAGUE_KIND:
        queryset = queryset.filter(kind=kind)
    return queryset.only(*ENTITY_FIELDS)


def person_aliases_by_id(*, kind: str, ids: list[int]) -> QuerySet[EntityAlias]:
    """These aliases (by primary key) if a person recorded them, with their entity, if it is
    of the kind and not redirected; no query when none."""
    if not ids:
        return EntityAlias.objects.none()
    queryset = EntityAlias.objects.filter(
        pk__in=ids, source__in=PERSON_ALIAS_SOURCES, entity__redirect_to__isnull=True
    )
    if kind != VAGUE_KIND:
        queryset = queryset.filter(entity__kind=kind)
    return queryset.select_related("entity").only(
        "alias", "entity_id", *(f"entity__{field}" for field in ENTITY_FIELDS)
    )


def entities_within_reach(*, kind: str, key: str) -> QuerySet[Entity]:
    """Entities not redirected whose key is within two edits of this one."""
    return entities_by_id(kind=kind, ids=owners_within_reach(key)[0])


def person_aliases_within_reach(*, kind: str, key: str) -> QuerySet[EntityAlias]:
    """Aliases a person recorded, of entities not redirected, whose key is within two edits of
    this one, with their entity: a typo of one converges as one of the name does."""
    return person_aliases_by_id(kind=kind, ids=owners_within_reach(key)[1])
