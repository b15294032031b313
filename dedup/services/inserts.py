"""The hand-written INSERT of a new drawer and its links, on the hot path of every write."""

from __future__ import annotations

from typing import Any, cast

from django.db import connection, models

from palace.models import Drawer, DrawerLink

_LINK_FIELDS = ("older", "verdict", "similarity", "signals", "status", "created_at")


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
    drawer_fields = [f for f in Drawer._meta.local_concrete_fields if not f.primary_key]
    # Concrete fields have a column.
    statements = [_insert_sql(Drawer, [cast(str, f.column) for f in drawer_fields], 1, "id")]
    params = [f.get_db_prep_save(f.pre_save(drawer, True), connection) for f in drawer_fields]
    link_params: list[Any] = []
    if links:
        link_fields = [
            cast(models.Field, DrawerLink._meta.get_field(name)) for name in _LINK_FIELDS
        ]
        statements.append(_links_insert_sql(link_fields, len(links)))
        link_params = _links_params(drawer, links, link_fields)
    with connection.cursor() as cursor:
        if links and connection.vendor == "postgresql":
            cursor.execute("; ".join(statements), [*params, *link_params])
            drawer.pk = cursor.fetchone()[0]
            cursor.nextset()
        else:
            cursor.execute(statements[0], params)
            drawer.pk = cursor.fetchone()[0]
            if links:
                cursor.execute(statements[1], link_params)
        link_ids = {older_id: link_id for link_id, older_id in cursor.fetchall()} if links else {}
    _mark_saved(drawer)
    stored = [link for link in links if link.older_id in link_ids]
    for link in stored:  # one link per older drawer; RETURNING promises no order
        link.pk = link_ids[link.older_id]
        link.newer_id = drawer.pk
        _mark_saved(link)
    return stored


def _links_insert_sql(link_fields: list[models.Field], rows: int) -> str:
    newer = f"(SELECT id FROM {Drawer._meta.db_table} WHERE uuid = %s)"
    columns = ["newer_id", *(str(f.column) for f in link_fields)]
    if connection.vendor != "postgresql":  # one writer at a time: no older drawer can vanish
        return _insert_sql(DrawerLink, columns, rows, "id, older_id", first_value=newer)
    # The values are typed by casts: in a SELECT, unlike in INSERT ... VALUES, no column does.
    casts = [f"%s::{f.cast_db_type(connection)}" for f in link_fields]
    row = f"({', '.join([newer, *casts])})"
    drawers = Drawer._meta.db_table
    return (
        f"INSERT INTO {DrawerLink._meta.db_table} ({', '.join(columns)}) "
        f"SELECT v.* FROM (VALUES {', '.join([row] * rows)}) AS v ({', '.join(columns)}) "
        f"JOIN {drawers} AS older ON older.id = v.older_id "
        "ORDER BY older.id FOR KEY SHARE OF older RETURNING id, older_id"
    )


def _links_params(
    drawer: Drawer, links: list[DrawerLink], link_fields: list[models.Field]
) -> list[Any]:
    drawer_uuid = Drawer._meta.get_field("uuid").get_db_prep_save(drawer.uuid, connection)
    return [
        value
        for link in links
        for value in (
            drawer_uuid,
            *(f.get_db_prep_save(getattr(link, f.attname), connection) for f in link_fields),
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


def _mark_saved(instance: models.Model) -> None:
    instance._state.adding = False
    instance._state.db = connection.alias
