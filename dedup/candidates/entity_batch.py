"""A sweep's entity lookups, for a batch of entities at once (`older_lookups`): for each entity,
what the write path's lookups (`entities.name_lookup`, fuzzy) find for its name among the
entities older than it. Three statements for the whole batch, where asking each entity's name on
its own had cost two or three ORM queries an entity (`bench/entity_sweep.py`):

1. the exact lookups (name, key, alias key) of every entity of the batch, each entity found with
   all its aliases: `entities_named`'s three indexed lookups, joined to the batch;
2. for the entities that found none older, the signature lookups of `owners_within_reach` for
   each one's key (one search per signature asked; on SQLite one statement an entity, see
   `_signed_owners`), the keys judged within reach here;
3. the owners within reach, by primary key, with the write path's statement (`owners_sql`: its
   ids one array on PostgreSQL; on SQLite a placeholder each up to 64, else one JSON array).

In the first two, each lookup's side of the join is the batch, one parameter per column
(PostgreSQL arrays) or one JSON parameter (SQLite's json_each), so a batch of 200 binds a
handful of values, not thousands.
On PostgreSQL every join is a fenced LATERAL lookup (`_join`), so whatever the estimates each is
an index search per row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from dedup.candidates.entities import (
    KnownEntity,
    NameLookup,
    entity_columns,
    entity_of,
    in_reach,
    known_by_entity,
    owners_sql,
    signatures_parameter,
    signed_owners_sql,
)
from dedup.database import default_connection
from dedup.policy import VAGUE_KIND
from dedup.policy.signatures import reach_range, reach_signatures
from palace.models import (
    Entity,
    EntityAlias,
    EntityAliasSignature,
    EntitySignature,
)


def older_lookups(entities: Sequence[Entity]) -> dict[int, NameLookup]:
    """For each entity (by id): the entities older than it (a smaller id) that its name finds by
    the exact lookups, each with all its aliases; or, if none, those within reach of its key, or
    of the key of an alias a person recorded (of its kind unless vague, not redirected), each
    with those aliases. As `name_lookup` would find them for the entity's name, kind and key,
    fuzzy, had the entity not been stored yet."""
    named = _named_older(entities)
    reached = _reached_older([entity for entity in entities if not named.get(entity.pk)])
    return {
        entity.pk: NameLookup(named.get(entity.pk, []), reached.get(entity.pk, []))
        for entity in entities
    }


def _named_older(entities: Sequence[Entity]) -> dict[int, list[KnownEntity]]:
    if not entities:
        return {}
    db = default_connection()
    table, aliases = Entity._meta.db_table, EntityAlias._meta.db_table
    asked, params = _batch(
        [("id", "bigint"), ("name", "text"), ("key", "text"), ("kind", "text")],
        [(e.pk, e.name, e.key, e.kind) for e in entities],
    )
    hits = " UNION ".join(
        f"SELECT asked.id AS swept, asked.kind AS kind, s.{column} AS found FROM asked "
        + _join(db.vendor, source, "s", [column], f"{{t}}.{match} = asked.{match}")
        for column, source, match in (
            ("id", table, "name"),
            ("id", table, "key"),
            ("entity_id", aliases, "key"),
        )
    )
    columns = [str(field.column) for field in Entity._meta.concrete_fields]
    sql = (
        f"WITH asked AS ({asked}) SELECT hit.swept, {entity_columns()}, a.alias "
        f"FROM ({hits}) hit"
        + _join(db.vendor, table, "e", columns, "{t}.id = hit.found AND {t}.id < hit.swept")
        + _join(db.vendor, aliases, "a", ["id", "alias"], "{t}.entity_id = e.id", left=True)
        + " WHERE hit.kind = %s OR e.kind = hit.kind ORDER BY hit.swept, e.id, a.id"
    )
    with db.cursor() as cursor:
        cursor.execute(sql, [*params, VAGUE_KIND])
        rows = cursor.fetchall()
    found: dict[int, list[tuple[Entity, str | None]]] = {}
    for swept, *row in rows:
        found.setdefault(swept, []).append((entity_of(row[:-1], db), row[-1]))
    return {swept: known_by_entity(spellings) for swept, spellings in found.items()}


def _reached_older(entities: Sequence[Entity]) -> dict[int, list[KnownEntity]]:
    if not entities:
        return {}
    signed = _signed_owners(entities)
    owners = {entity.pk: in_reach(entity.key, signed.get(entity.pk, [])) for entity in entities}
    read, spelled = _owners(
        {owner for entity_ids, _ in owners.values() for owner in entity_ids},
        {alias for _, alias_ids in owners.values() for alias in alias_ids},
    )
    reached: dict[int, list[KnownEntity]] = {}
    for entity in entities:
        entity_ids, alias_ids = owners[entity.pk]
        spellings: list[tuple[Entity, str | None]] = [
            (read[owner], None) for owner in entity_ids if owner in read
        ]
        spellings += [spelled[alias] for alias in alias_ids if alias in spelled]
        kept = [
            (owner, alias)
            for owner, alias in spellings
            if owner.pk < entity.pk and entity.kind in (VAGUE_KIND, owner.kind)
        ]
        if kept:
            reached[entity.pk] = known_by_entity(kept)
    return reached


def _signed_owners(entities: Sequence[Entity]) -> dict[int, list[tuple[int, int, str]]]:
    """Per entity, the (side, owner, owner's key) of every stored signature its key asks (on
    PostgreSQL the entities' side only those older than it), as `owners_within_reach` reads
    them. On SQLite, one statement an entity: a statement there is a call in this process, not a
    round trip, and asking each entity's signatures on its own took 0.77 s for 1,000 entities at
    1,000,000 (bench/entity_sweep.py's store), one statement for each batch of 200 0.99 s (its
    rows joined to the batch's, where one entity's bounds are constants)."""
    db = default_connection()
    if db.vendor != "postgresql":
        signed: dict[int, list[tuple[int, int, str]]] = {}
        for entity in entities:
            sql, params = signed_owners_sql(entity.key, db.vendor)
            with db.cursor() as cursor:
                cursor.execute(sql, params)
                signed[entity.pk] = cursor.fetchall()
        return signed
    asked, params = _batch(
        [("swept", "bigint"), ("signature", "bigint"), ("low", "bigint"), ("high", "bigint")],
        [
            (entity.pk, signature, *reach_range(entity.key))
            for entity in entities
            for signature in reach_signatures(entity.key)
        ],
    )
    branches = [
        f"SELECT asked.swept, {side}, s.{owner}, s.key FROM asked "
        + _join(
            db.vendor,
            table,
            "s",
            [owner, "key"],
            "{t}.signature BETWEEN asked.signature + asked.low "
            f"AND asked.signature + asked.high{older}",
        )
        for side, table, owner, older in (
            (0, EntitySignature._meta.db_table, "entity_id", " AND {t}.entity_id < asked.swept"),
            (1, EntityAliasSignature._meta.db_table, "alias_id", ""),
        )
    ]
    signed = {}
    with db.cursor() as cursor:
        cursor.execute(f"WITH asked AS ({asked}) {' UNION ALL '.join(branches)}", params)
        for swept, side, owner, key in cursor.fetchall():
            signed.setdefault(swept, []).append((side, owner, key))
    return signed


def _owners(
    entity_ids: set[int], alias_ids: set[int]
) -> tuple[dict[int, Entity], dict[int, tuple[Entity, str]]]:
    """The entities not redirected among these ids, and the aliases among these a person
    recorded of an entity not redirected (each with its entity): `owners_sql`, of any kind (each
    swept entity keeps those of its own)."""
    read: dict[int, Entity] = {}
    spelled: dict[int, tuple[Entity, str]] = {}
    sql, params = owners_sql(entity_ids, alias_ids)
    if not sql:
        return read, spelled
    db = default_connection()
    with db.cursor() as cursor:
        cursor.execute(sql, params)
        for *row, alias, alias_id in cursor.fetchall():
            entity = entity_of(row, db)
            if alias_id is None:
                read[entity.pk] = entity
            else:
                spelled[alias_id] = (entity, alias)
    return read, spelled


def _batch(columns: list[tuple[str, str]], rows: list[tuple[Any, ...]]) -> tuple[str, list[Any]]:
    """A SELECT of `rows` as a relation with these (name, PostgreSQL type) columns: on
    PostgreSQL one array parameter per column, unnested together (a bigint array written as
    one string: psycopg writes a list into the statement one number at a time); on SQLite one
    JSON parameter that json_each reads."""
    names = [name for name, _ in columns]
    if default_connection().vendor == "postgresql":
        arrays, params = [], []
        for index, (_, sql_type) in enumerate(columns):
            values = [row[index] for row in rows]
            arrays.append(f"%s::{sql_type}[]")
            params.append(signatures_parameter(values) if sql_type == "bigint" else values)
        return f"SELECT * FROM unnest({', '.join(arrays)}) AS b({', '.join(names)})", params
    fields = ", ".join(
        f"json_extract(value, '$[{index}]') AS {name}" for index, name in enumerate(names)
    )
    return f"SELECT {fields} FROM json_each(%s)", [json.dumps(rows)]


def _join(
    vendor: str, table: str, alias: str, columns: list[str], where: str, *, left: bool = False
) -> str:
    """A join of `table` as `alias` on `where` (which names the table `{t}`), whose `columns`
    the rest of the statement reads. On PostgreSQL a LATERAL subquery fenced by OFFSET 0, so
    it is an index search for each row on its left whatever the estimates (unfenced, the planner
    made the batch's lookups hash joins, each reading its whole table); on SQLite a plain join,
    CROSS to keep the batch the outer loop."""
    if vendor != "postgresql":
        return f" {'LEFT' if left else 'CROSS'} JOIN {table} {alias} ON {where.format(t=alias)}"
    selected = ", ".join(f"t.{column}" for column in columns)
    lookup = f"(SELECT {selected} FROM {table} t WHERE {where.format(t='t')} OFFSET 0) {alias}"
    return f" LEFT JOIN LATERAL {lookup} ON true" if left else f" CROSS JOIN LATERAL {lookup}"
