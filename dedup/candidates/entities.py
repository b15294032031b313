"""Entity candidates: the entities a sighted name may resolve to, from indexed lookups. Like the
drawer queries beside them, they hold no matching rule: `dedup.policy.resolve` judges.

The exact lookups (name, key, alias key) are three indexed lookups in a UNION. The typo and
resemblance lookups ask the signature tables (`dedup.policy.signatures`): every entity whose key,
or the key of an alias a person recorded, is within two edits of the name's shares a signature
with it. The tables hold the owner's key beside each signature, so the lookup keeps exactly the
owners within two edits (the set the policy may find close) before any entity is read, by
primary key."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.models import QuerySet

from dedup.policy import VAGUE_KIND
from dedup.policy.signatures import reach_signatures, within_reach
from palace.models import (
    PERSON_ALIAS_SOURCES,
    Entity,
    EntityAlias,
    EntityAliasSignature,
    EntitySignature,
)

# What the typo rule reads of an entity: a redirected one answers through its canonical one.
ENTITY_FIELDS = ("id", "name", "kind", "key", "redirect_to")


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


def owners_within_reach(key: str) -> tuple[list[int], list[int]]:
    """The entities, and the aliases a person recorded, whose key is within two edits (OSA) of
    this one: exactly those, and none that are not. One statement reads (owner, key) pairs
    from the signature indexes alone (covering: palace/0012); the keys are judged here, so no
    entity that is not within reach is ever read."""
    owners: tuple[list[int], list[int]] = ([], [])
    with connection.cursor() as cursor:
        cursor.execute(*_signed_owners_sql(reach_signatures(key)))
        for side, owner, owner_key in cursor.fetchall():  # UNION: each owner once
            if within_reach(key, owner_key):
                owners[side].append(owner)
    return owners


def _signed_owners_sql(signed: frozenset[int]) -> tuple[str, list[Any]]:
    """The (side, owner, key) of every signature asked, from both tables: written by hand, as
    the ORM's compilation of a few hundred parameters cost more than the lookup itself."""
    asked: list[Any]
    if connection.vendor == "postgresql":
        where, asked = "signature = ANY(%s)", [list(signed)]
    else:
        where, asked = f"signature IN ({', '.join(['%s'] * len(signed))})", list(signed)
    entity_table = EntitySignature._meta.db_table
    alias_table = EntityAliasSignature._meta.db_table
    sql = (
        f"SELECT 0, entity_id, key FROM {entity_table} WHERE {where} "
        f"UNION SELECT 1, alias_id, key FROM {alias_table} WHERE {where}"
    )
    return sql, asked + asked


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
