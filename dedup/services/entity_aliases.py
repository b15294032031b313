"""Aliases recorded by hand: through the API (`POST` and `DELETE /api/entities/{id}/aliases`,
an import), or by a curator's decision. A person's alias serves the typo rule too, so its
signatures are written with it (`index_person_alias`). A spelling a sighting converged by is
recorded by the resolution itself (`dedup.services.entities`)."""

from __future__ import annotations

from django.db import transaction

from dedup.errors import Conflict
from dedup.services.config import Actor
from dedup.services.entities import key_of
from dedup.services.inserts import signatures_insert
from dedup.validation import NAME_MAX_LENGTH, clean_entity_name, clean_label, entity_form
from palace.models import (
    AuditAction,
    AuditEntry,
    AuditTarget,
    Entity,
    EntityAlias,
    EntityAliasSignature,
)


def entity_alias_add(
    *,
    entity: Entity,
    alias: str,
    actor: Actor = None,
    source: EntityAlias.Source = EntityAlias.Source.API,
) -> tuple[Entity, bool]:
    """Record another spelling of an entity by hand, so later sightings converge on it (and,
    since a person recorded it, a typo of it converges too).

    The alias is trimmed (and kept without characters that show nothing); one equal to the
    name or already recorded changes nothing.
    """
    alias = clean_entity_name(alias, "alias")
    with transaction.atomic():
        entity = Entity.objects.select_for_update().get(pk=entity.pk)
        if alias == entity.name or entity.alias_set.filter(alias=alias).exists():
            return entity, False
        before = list(entity.alias_set.values_list("alias", flat=True))
        index_person_alias(
            EntityAlias.objects.create(
                entity=entity, alias=alias, key=key_of(alias, "alias"), source=source
            )
        )
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.ENTITY_ALIAS_ADD,
            target_type=AuditTarget.ENTITY,
            target_id=entity.uuid,
            before={"aliases": before},
            after={"aliases": [*before, alias]},
            data={"alias": alias},
        )
    return entity, True


def entity_alias_remove(*, entity: Entity, alias: str, actor: Actor = None) -> tuple[Entity, bool]:
    """Take back a spelling recorded through the API (`entity_alias_add`), audited
    (`entity.alias_remove`, before and after as the addition's): later sightings of it, or of a
    typo of it, no longer converge on the entity by it; those that did stay its mentions
    (history). A curator's alias is taken back by reverting the decision that recorded it, and
    a convergence's records what a sighting said: both refused (409 `alias_not_removable`). An
    alias the entity does not hold changes nothing (False)."""
    alias = clean_label(alias, "alias", max_length=NAME_MAX_LENGTH)
    with transaction.atomic():
        entity = Entity.objects.select_for_update().get(pk=entity.pk)
        # As written (one recorded before aliases lost their invisible characters), else as an
        # alias is recorded now (`clean_entity_name`): what was added is taken back by the same.
        recorded = (
            entity.alias_set.filter(alias=alias).first()
            or entity.alias_set.filter(alias=entity_form(alias)).first()
        )
        if recorded is None:
            return entity, False
        if recorded.source != EntityAlias.Source.API:
            undo = (
                "revert the curator's add_alias decision that recorded it"
                if recorded.source == EntityAlias.Source.CURATOR
                else "a sighting converged by it, and it records what that sighting said"
            )
            raise Conflict(
                f"This alias was not recorded through the API: {undo}.",
                code="alias_not_removable",
                details={"alias": alias, "source": recorded.source},
            )
        before = list(entity.alias_set.values_list("alias", flat=True))
        recorded.delete()  # its signatures go with it
        # The alias as it was stored, not as it was given: one taken back by a look-alike
        # spelling ("Countess\u2066 Lovelace" for "Countess Lovelace") was still listed after.
        AuditEntry.objects.record(
            actor=actor,
            action=AuditAction.ENTITY_ALIAS_REMOVE,
            target_type=AuditTarget.ENTITY,
            target_id=entity.uuid,
            before={"aliases": before},
            after={"aliases": [a for a in before if a != recorded.alias]},
            data={"alias": recorded.alias},
        )
    return entity, True


def index_person_alias(alias: EntityAlias) -> None:
    """Store the signatures of an alias a person recorded (the API's, or a curator's), in the
    caller's transaction: a typo of it converges as one of the name does. They go with it."""
    signatures_insert(EntityAliasSignature, "alias_id", alias.pk, alias.key)
