"""The memory palace: wings, rooms, drawers, entities, their links, and the audit log.

Models are thin: fields, constraints and indexes. Writes go through `dedup.services`, reads
through `palace.selectors`. Every internal primary key is an integer sequence, so "oldest" is a
plain comparison; the public id of a drawer or an entity is a UUID. One module per concern; every
model is importable from `palace.models`, as Django expects.
"""

from palace.models.audit import (
    DECISION_PREFIX,
    AuditAction,
    AuditEntry,
    AuditEntryQuerySet,
    AuditTarget,
    actor_label,
)
from palace.models.checkpoints import Checkpoint
from palace.models.common import (
    AGENTS_GROUP,
    LABEL_MAX_LENGTH,
    Actor,
    ReviewedLink,
    acting_user,
)
from palace.models.distinct import DistinctPair
from palace.models.drawers import (
    DECIDE_PERMISSION,
    Drawer,
    DrawerLink,
    DrawerQuerySet,
    DrawerRestatement,
)
from palace.models.entities import (
    PERSON_ALIAS_SOURCES,
    Entity,
    EntityAlias,
    EntityAliasSignature,
    EntityKeyBand,
    EntityLink,
    EntityQuerySet,
    EntitySignature,
    Mention,
)
from palace.models.imports import Import
from palace.models.installation import InstallationKey
from palace.models.places import DIARY_ROOM, Room, Wing

__all__ = [
    "AGENTS_GROUP",
    "DECIDE_PERMISSION",
    "DECISION_PREFIX",
    "DIARY_ROOM",
    "LABEL_MAX_LENGTH",
    "PERSON_ALIAS_SOURCES",
    "Actor",
    "AuditAction",
    "AuditEntry",
    "AuditEntryQuerySet",
    "AuditTarget",
    "Checkpoint",
    "DistinctPair",
    "Drawer",
    "DrawerLink",
    "DrawerQuerySet",
    "DrawerRestatement",
    "Entity",
    "EntityAlias",
    "EntityAliasSignature",
    "EntityKeyBand",
    "EntityLink",
    "EntityQuerySet",
    "EntitySignature",
    "Import",
    "InstallationKey",
    "Mention",
    "ReviewedLink",
    "Room",
    "Wing",
    "acting_user",
    "actor_label",
]
