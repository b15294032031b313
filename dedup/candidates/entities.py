"""Entity candidates: the entities a sighted name may resolve to, from indexed lookups. Like the
drawer queries beside them, they hold no matching rule: `dedup.policy.resolve` judges."""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.db.models.functions import Length

from dedup.policy import VAGUE_KIND
from dedup.policy.entities import KEY_LENGTH_BAND
from palace.models import PERSON_ALIAS_SOURCES, Entity, EntityAlias


def entities_matching(*, kind: str, name: str, key: str) -> QuerySet[Entity]:
    """Entities with this exact name, this key, or an alias with this key (indexed lookups)."""
    queryset = Entity.objects.filter(Q(name=name) | Q(key=key) | Q(alias_set__key=key))
    if kind != VAGUE_KIND:
        queryset = queryset.filter(kind=kind)
    return queryset.distinct().prefetch_related("alias_set")


def entities_in_key_band(*, kind: str, key_length: int) -> QuerySet[Entity]:
    """Entities whose key length is within two of the name's: only they can be two edits away."""
    # A redirected entity answers through its canonical one and is never proposed itself.
    queryset = Entity.objects.filter(
        key_length__gte=key_length - KEY_LENGTH_BAND,
        key_length__lte=key_length + KEY_LENGTH_BAND,
        redirect_to__isnull=True,
    )
    if kind != VAGUE_KIND:
        queryset = queryset.filter(kind=kind)
    return queryset.only("id", "name", "kind", "key", "redirect_to")


def person_aliases_in_key_band(*, kind: str, key_length: int) -> QuerySet[EntityAlias]:
    """Aliases a person recorded (few: the source narrows the scan), with their entity, whose
    key length is within two of the name's: a typo of one converges as one of the name does."""
    queryset = EntityAlias.objects.alias(key_length=Length("key")).filter(
        source__in=PERSON_ALIAS_SOURCES,
        entity__redirect_to__isnull=True,
        key_length__gte=key_length - KEY_LENGTH_BAND,
        key_length__lte=key_length + KEY_LENGTH_BAND,
    )
    if kind != VAGUE_KIND:
        queryset = queryset.filter(entity__kind=kind)
    return queryset.select_related("entity").only(
        "alias", "entity__id", "entity__name", "entity__kind", "entity__key", "entity__redirect_to"
    )
