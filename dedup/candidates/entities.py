"""Entity candidates: the entities a sighted name may resolve to, from indexed lookups. Like the
drawer queries beside them, they hold no matching rule: `dedup.policy.resolve` judges.

The exact lookups (name, key, alias key) are three indexed lookups in a UNION. The typo and
resemblance lookups ask the signature tables (`dedup.policy.signatures`): every entity whose key,
or the key of an alias a person recorded, is within two edits of the name's shares a signature
with it, so they return every entity the policy could find close, and a few it will not."""

from __future__ import annotations

from django.db.models import QuerySet

from dedup.policy import VAGUE_KIND
from dedup.policy.signatures import reach_signatures
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


def signed_entity_ids(key: str) -> list[int]:
    """The entities that share a signature with this key, from the signature index alone."""
    signed = EntitySignature.objects.filter(signature__in=reach_signatures(key))
    return list(signed.values_list("entity_id", flat=True).distinct())


def signed_alias_ids(key: str) -> list[int]:
    """The aliases (only a person's are indexed) that share a signature with this key."""
    signed = EntityAliasSignature.objects.filter(signature__in=reach_signatures(key))
    return list(signed.values_list("alias_id", flat=True).distinct())


# The ids are read first, in a query of their own, and the rows then by primary key: asked as
# one query (a semi-join), PostgreSQL misjudged how few ids the signatures name and hashed every
# entity of the kind instead (225 ms instead of 3 at 1,000,000 entities).


def entities_within_reach(*, kind: str, key: str) -> QuerySet[Entity]:
    """Entities not redirected whose key may be within two edits of this one (every one that
    is, from the signature index, and a few that are not)."""
    queryset = Entity.objects.filter(pk__in=signed_entity_ids(key), redirect_to__isnull=True)
    if kind != VAGUE_KIND:
        queryset = queryset.filter(kind=kind)
    return queryset.only(*ENTITY_FIELDS)


def person_aliases_within_reach(*, kind: str, key: str) -> QuerySet[EntityAlias]:
    """Aliases a person recorded, of entities not redirected, whose key may be within two edits
    of this one, with their entity: a typo of one converges as one of the name does."""
    queryset = EntityAlias.objects.filter(
        pk__in=signed_alias_ids(key),
        source__in=PERSON_ALIAS_SOURCES,
        entity__redirect_to__isnull=True,
    )
    if kind != VAGUE_KIND:
        queryset = queryset.filter(entity__kind=kind)
    return queryset.select_related("entity").only(
        "alias", "entity_id", *(f"entity__{field}" for field in ENTITY_FIELDS)
    )
