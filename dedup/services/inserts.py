"""The hand-written INSERTs of the hot paths: a new drawer and its links (every write), a row
unless it conflicts (entities, aliases, mentions), a new entity with its signatures and links."""

from __future__ import annotations

import json
from typing import Any, cast

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper

from dedup import candidates
from dedup.database import default_connection
from dedup.policy import signatures
from palace.models import Drawer, DrawerLink, Entity, EntityLink, EntitySignature, Mention

_LINK_FIELDS = ("older", "verdict", "similarity", "signals", "status", "created_at")
_ENTITY_LINK_FIELDS = ("older", "similarity", "distance", "status", "created_at")


def drawer_insert(drawer: Drawer, links: list[DrawerLink]) -> list[DrawerLink]:
    """Insert a new drawer and its links, mark them saved, and return the links stored.

    What `save()` and `bulk_create()` do, without their cost on the hot path of every write: the
    ORM's preparation took longer than the inserts themselves. Values are still prepared by each
    model field, so they are stored exactly as the ORM would store them. A link names its newer
    drawer by uuid, known before the insert, so on PostgreSQL both statements go in one round
    trip.

    On PostgreSQL each older drawer is held (FOR KEY SHARE, in id order) as its link is inserted,
    so a DELETE of it waits for this write to commit; a drawer deleted since the candidates were
    read is not linked (its link is left out of what is returned), rather than the write failing
    at commit on the deferred foreign key.
    """
    db = default_connection()
    columns, params = _insert_values(drawer, db)
    statements = [_insert_sql(Drawer, columns, 1, "id")]
    link_params: list[Any] = []
    if links:
        link_fields = [
            cast(models.Field, DrawerLink._meta.get_field(name)) for name in _LINK_FIELDS
        ]
        statements.append(_links_insert_sql(link_fields, len(links), db))
        link_params = _links_params(drawer, links, link_fields, db)
    with db.cursor() as cursor:
        if links and db.vendor == "postgresql":
            cursor.execute("; ".join(statements), [*params, *link_params])
            drawer_id = cursor.fetchone()[0]
            cursor.nextset()
        else:
            cursor.execute(statements[0], params)
            drawer_id = cursor.fetchone()[0]
            if links:
                cursor.execute(statements[1], link_params)
        link_ids = {older_id: link_id for link_id, older_id in cursor.fetchall()} if links else {}
    _mark_saved(drawer, drawer_id, db)
    stored = [link for link in links if link.older_id in link_ids]
    for link in stored:  # one link per older drawer; RETURNING promises no order
        link.newer_id = drawer.pk
        _mark_saved(link, link_ids[link.older_id], db)
    return stored


def _links_insert_sql(link_fields: list[models.Field], rows: int, db: BaseDatabaseWrapper) -> str:
    newer = f"(SELECT id FROM {Drawer._meta.db_table} WHERE uuid = %s)"
    columns = ["newer_id", *(str(f.column) for f in link_fields)]
    if db.vendor != "postgresql":  # one writer at a time: no older drawer can vanish
        return _insert_sql(DrawerLink, columns, rows, "id, older_id", first_value=newer)
    # The values are typed by casts: in a SELECT, unlike in INSERT ... VALUES, no column does.
    casts = [f"%s::{f.cast_db_type(db)}" for f in link_fields]
    row = f"({', '.join([newer, *casts])})"
    drawers = Drawer._meta.db_table
    return (
        f"INSERT INTO {DrawerLink._meta.db_table} ({', '.join(columns)}) "
        f"SELECT v.* FROM (VALUES {', '.join([row] * rows)}) AS v ({', '.join(columns)}) "
        f"JOIN {drawers} AS older ON older.id = v.older_id "
        "ORDER BY older.id FOR KEY SHARE OF older RETURNING id, older_id"
    )


def _links_params(
    drawer: Drawer,
    links: list[DrawerLink],
    link_fields: list[models.Field],
    db: BaseDatabaseWrapper,
) -> list[Any]:
    drawer_uuid = Drawer._meta.get_field("uuid").get_db_prep_save(drawer.uuid, db)
    return _rows_params(drawer_uuid, links, link_fields, db)


def _rows_params(
    newer: Any, links: list[Any], link_fields: list[models.Field], db: BaseDatabaseWrapper
) -> list[Any]:
    """The values of links' rows, each the newer side's value and then its fields', prepared by
    each field (as `save()` would)."""
    return [
        value
        for link in links
        for value in (
            newer,
            *(f.get_db_prep_save(getattr(link, f.attname), db) for f in link_fields),
        )
    ]


def _insert_sql(
    model: type[models.Model],
    columns: list[str],
    rows: int,
    returning: str,
    *,
    first_value: str = "%s",
) -> str:
    row = f"({', '.join([first_value, *['%s'] * (len(columns) - 1)])})"
    return (
        f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) "
        f"VALUES {', '.join([row] * rows)} RETURNING {returning}"
    )


def _mark_saved(instance: models.Model, pk: int, db: BaseDatabaseWrapper) -> None:
    """Mark a row inserted by hand as saved, with its id, as the ORM would."""
    instance.pk = pk
    instance._state.adding = False
    instance._state.db = db.alias


def insert_unless_conflict(
    row: models.Model, unique: tuple[str, ...], *, holding: models.Model | None = None
) -> bool:
    """Insert a new row in one statement (INSERT ... ON CONFLICT DO NOTHING RETURNING id, on both
    databases), without the savepoint `get_or_create` needs; False (and no id) when a row with
    the same `unique` columns (by column name) exists. The ORM's bulk_create returns no id
    when it ignores one.

    `holding`: a row the new one refers to, held until commit in the same statement (as
    `dedup.locks.drawer_hold` holds a drawer: FOR KEY SHARE on PostgreSQL; SQLite's write lock
    is the transaction's); False too, and nothing inserted, if it is gone."""
    db = default_connection()
    meta = row._meta
    columns, values = _insert_values(row, db)
    quote = db.ops.quote_name
    target = ", ".join(quote(column) for column in unique)
    marks = ", ".join(["%s"] * len(values))
    source = f"VALUES ({marks})"
    if holding is not None:
        lock = " FOR KEY SHARE" if db.vendor == "postgresql" else ""
        held = holding._meta
        # SQLite parses an upsert's SELECT only with a WHERE clause, which this one has.
        source = (
            f"SELECT {marks} FROM {quote(held.db_table)} "
            f"WHERE {quote(str(held.pk.column))} = %s{lock}"
        )
        values.append(holding.pk)
    with db.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(meta.db_table)} ({', '.join(columns)}) {source} "
            f"ON CONFLICT ({target}) DO NOTHING RETURNING {quote(str(meta.pk.column))}",
            values,
        )
        inserted = cursor.fetchone()
    if inserted is None:
        return False
    _mark_saved(row, inserted[0], db)
    return True


def _insert_values(row: models.Model, db: BaseDatabaseWrapper) -> tuple[list[str], list[Any]]:
    """The quoted columns of a new row's INSERT (all but its primary key) and their values, each
    prepared by its field, as `save()` would store it."""
    fields = [f for f in row._meta.concrete_fields if not f.primary_key]
    columns = [db.ops.quote_name(str(f.column)) for f in fields]
    return columns, [f.get_db_prep_save(f.pre_save(row, True), db) for f in fields]


def entity_insert_indexed(
    entity: Entity, links: list[EntityLink], mention: Mention | None = None
) -> bool:
    """`insert_unless_conflict` of a new entity, its signatures (`signatures_insert`), its
    possibly_same_as links and, if given, a mention of it (its drawer set, held as
    `insert_unless_conflict` holds it: left unsaved if the drawer is gone), each written by hand
    (the ORM's `bulk_create` of one link cost twice the insert). False, and nothing written, if
    an entity with its (name, kind) exists.

    PostgreSQL: one statement (INSERTs in a WITH, each reading the entity's RETURNING), one round
    trip instead of four. SQLite, which has no INSERT in a WITH and no round trips: one each."""
    link_fields = [
        cast(models.Field, EntityLink._meta.get_field(name)) for name in _ENTITY_LINK_FIELDS
    ]
    db = default_connection()
    if db.vendor == "postgresql":
        ids = _entity_insert_indexed_postgresql(entity, links, link_fields, mention, db)
        if ids is None:
            return False
    else:
        if not insert_unless_conflict(entity, ("name", "kind")):
            return False
        signatures_insert(EntitySignature, "entity_id", entity.pk, entity.key)
        ids = _entity_links_insert(entity, links, link_fields, db) if links else {}
        if mention is not None:
            mention.entity = entity
            insert_unless_conflict(mention, _MENTION_UNIQUE, holding=mention.drawer)
    for link in links:
        link.newer = entity  # now that it has its id
        _mark_saved(link, ids[link.older_id], db)
    return True


_MENTION_UNIQUE = ("drawer_id", "entity_id")  # mention_unique_pair


def _entity_insert_indexed_postgresql(
    entity: Entity,
    links: list[EntityLink],
    link_fields: list[models.Field],
    mention: Mention | None,
    db: BaseDatabaseWrapper,
) -> dict[int, int] | None:
    """The new entity, its signatures, links and mention in one statement: its links' ids by the
    older entity's, or None if the entity conflicted. Marks the entity (and the mention, if its
    drawer was there to hold) saved."""
    columns, values = _insert_values(entity, db)
    quote = db.ops.quote_name
    # The links' values as one typed array a column, prepared by each field (as `save()` would).
    link_columns = ", ".join(str(f.column) for f in link_fields)
    link_arrays = [
        [f.get_db_prep_save(getattr(link, f.attname), db) for link in links] for f in link_fields
    ]
    arrays = ", ".join(f"%s::{f.cast_db_type(db)}[]" for f in link_fields)
    mention_sql, mentioned = "", "NULL::bigint"
    mention_params: list[Any] = []
    if mention is not None:
        mention_sql, mention_params = _mention_of_new_entity(mention, db)
        mentioned = "(SELECT id FROM m)"
    with db.cursor() as cursor:
        cursor.execute(
            f"WITH e AS (INSERT INTO {quote(Entity._meta.db_table)} ({', '.join(columns)}) "
            f"VALUES ({', '.join(['%s'] * len(values))}) "
            "ON CONFLICT (name, kind) DO NOTHING RETURNING id), "
            f"s AS (INSERT INTO {quote(EntitySignature._meta.db_table)} "
            "(signature, entity_id, key) "
            "SELECT signature, e.id, %s FROM e, unnest(%s::bigint[]) AS signature), "
            f"l AS (INSERT INTO {quote(EntityLink._meta.db_table)} (newer_id, {link_columns}) "
            f"SELECT e.id, v.* FROM e, unnest({arrays}) AS v({link_columns}) "
            f"RETURNING id, older_id){mention_sql} "
            f"SELECT e.id, l.id, l.older_id, {mentioned} FROM e LEFT JOIN l ON true",
            [
                *values,
                entity.key,
                candidates.signatures_parameter(signatures.key_signatures(entity.key)),
                *link_arrays,
                *mention_params,
            ],
        )
        rows = cursor.fetchall()
    if not rows:
        return None
    _mark_saved(entity, rows[0][0], db)
    if mention is not None:
        mention.entity = entity
        if rows[0][3] is not None:
            _mark_saved(mention, rows[0][3], db)
    return {older: link_id for _, link_id, older, _ in rows}


def _mention_of_new_entity(mention: Mention, db: BaseDatabaseWrapper) -> tuple[str, list[Any]]:
    """The WITH's part that inserts a mention of the entity `e` inserts, holding its drawer
    (FOR KEY SHARE, as `insert_unless_conflict` does; after the entity's lock, in the canonical
    order): nothing is inserted if the drawer is gone. A new entity has no mention to conflict."""
    quote = db.ops.quote_name
    columns, values = _insert_values(mention, db)
    # Its entity is the one `e` inserts: not a value yet.
    entity = columns.index(quote(str(Mention._meta.get_field("entity").column)))
    selected = ["%s"] * len(columns)
    selected[entity] = "e.id"
    del values[entity]
    sql = (
        f", m AS (INSERT INTO {quote(Mention._meta.db_table)} ({', '.join(columns)}) "
        f"SELECT {', '.join(selected)} FROM e, {quote(Drawer._meta.db_table)} AS d "
        "WHERE d.id = %s FOR KEY SHARE OF d RETURNING id)"
    )
    return sql, [*values, mention.drawer_id]


def _entity_links_insert(
    entity: Entity,
    links: list[EntityLink],
    link_fields: list[models.Field],
    db: BaseDatabaseWrapper,
) -> dict[int, int]:
    """A saved entity's links in one INSERT: their ids by the older entity's."""
    columns = ["newer_id", *(str(f.column) for f in link_fields)]
    params = _rows_params(entity.pk, links, link_fields, db)
    with db.cursor() as cursor:
        cursor.execute(_insert_sql(EntityLink, columns, len(links), "id, older_id"), params)
        return {older: link_id for link_id, older in cursor.fetchall()}


def signatures_insert(model: type[models.Model], owner: str, owner_id: int, key: str) -> None:
    """One INSERT of a key's signatures (`dedup.policy.signatures.key_signatures`: at most n + 2
    rows), each with its owner and the owner's key beside it. The signatures are one parameter
    (an array on PostgreSQL, a JSON array on SQLite), not three values a row."""
    db = default_connection()
    table = db.ops.quote_name(model._meta.db_table)
    keyed = signatures.key_signatures(key)
    if db.vendor == "postgresql":
        source, asked = "unnest(%s::bigint[]) AS s(value)", candidates.signatures_parameter(keyed)
    else:
        source, asked = "json_each(%s) AS s", json.dumps(list(keyed))
    with db.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (signature, {owner}, key) SELECT s.value, %s, %s FROM {source}",
            [owner_id, key, asked],
        )
