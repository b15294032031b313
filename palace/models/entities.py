"""Entities named in drawers, their aliases, the mentions, and the `possibly_same_as` links."""

from __future__ import annotations

import uuid
from collections.abc import Collection

from django.db import models
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from palace.models.common import ReviewedLink
from palace.models.drawers import Drawer


class EntityQuerySet(models.QuerySet["Entity"]):
    def visible_to(self, wings: Collection[str] | None) -> EntityQuerySet:
        """The entities a key reaching `wings` (None: every wing) is told of: those a drawer in
        one of its wings names (`seen_in`). A key of every wing is told of every entity, one
        named nowhere too; a key of some wings, of no other: an entity is palace-wide, but that
        one exists is the fact of the wings that name it."""
        return self if wings is None else self.filter(seen_in(wings))


def seen_in(wings: Collection[str]) -> Exists:
    """The entity has a mention in one of `wings`. One EXISTS, which PostgreSQL joins as a
    semi-join: a page of entities in id order probes each one's mentions by their entity index
    (an OR of two such probes, a redirected entity's mentions too, was planned as a hash of every
    mention of the wings: 0.6 s a page at 200,000 mentions, against 1 to 45 ms)."""
    return Exists(mentions_in(wings).filter(entity=OuterRef("pk")))


def mentions_in(wings: Collection[str] | None) -> models.QuerySet[Mention]:
    """The mentions in `wings` (None: in every wing): by their drawer's wing."""
    where = Q() if wings is None else Q(drawer__room__wing__name__in=sorted(wings))
    return Mention.objects.filter(where)


class Entity(models.Model):
    """A person, tool, project... named in drawers. `name` is the first spelling seen and is
    never rewritten; other spellings are aliases."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=32, default="other")

    class Redirect(models.TextChoices):
        ALIAS = "alias", "alias: later sightings go to the canonical entity"
        MERGE = "merge", "merge: mentions and aliases are served from the canonical entity"

    key = models.CharField(max_length=200, blank=True)
    key_length = models.PositiveIntegerField(default=0)
    # Indexed for the entities redirected only (`entity_redirected`): nearly all are not.
    redirect_to = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="redirected_from",
        db_index=False,
    )
    redirect_kind = models.CharField(max_length=8, choices=Redirect.choices, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = EntityQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "entities"
        constraints = [
            models.UniqueConstraint(fields=["name", "kind"], name="entity_unique_name_kind"),
        ]
        indexes = [
            models.Index(fields=["key"], name="entity_key"),
            models.Index(fields=["kind", "key_length"], name="entity_kind_key_length"),
            # Partial: an index of every entity, nearly all NULL, told SQLite's ANALYZE that a
            # redirect_to_id matches them all, and it read the whole table for the entities
            # merged into one (120 ms an answer to a mention at 1,000,000 entities).
            models.Index(
                fields=["redirect_to"],
                name="entity_redirected",
                condition=Q(redirect_to__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class EntityAlias(models.Model):
    """Another spelling of an entity, with its key (indexed) so later sightings converge.

    `source` says who recorded it. Only an alias a person recorded serves the typo rule: one a
    convergence recorded may itself have been a typo, and spellings would drift."""

    class Source(models.TextChoices):
        CONVERGENCE = "convergence", "a sighting that converged"
        API = "api", "a person, through the API"
        CURATOR = "curator", "a curator's add_alias decision"

    entity = models.ForeignKey(  # indexed by entity_alias_unique (entity, alias)
        Entity, on_delete=models.CASCADE, related_name="alias_set", db_index=False
    )
    alias = models.CharField(max_length=200)
    key = models.CharField(max_length=200)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.CONVERGENCE)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["entity", "alias"], name="entity_alias_unique"),
        ]
        indexes = [models.Index(fields=["key"], name="entity_alias_key")]
        verbose_name_plural = "entity aliases"

    def __str__(self) -> str:
        return self.alias


# The sources of aliases a person recorded: they serve the typo rule.
PERSON_ALIAS_SOURCES = (EntityAlias.Source.API, EntityAlias.Source.CURATOR)


class EntitySignature(models.Model):
    """One signature of an entity's key (`dedup.policy.signatures`): every key within two edits
    shares one, so a name's typos and resemblances are found by an indexed lookup. Written with
    the entity, in the same transaction (`dedup.services`). The primary key is the lookup index,
    and it covers the entity's `key` too (palace/0012: INCLUDE on PostgreSQL, a WITHOUT ROWID
    table on SQLite), so a lookup reads (entity, key) from the index alone and keeps those within
    two edits before it reads any entity."""

    pk = models.CompositePrimaryKey("signature", "entity")
    signature = models.BigIntegerField()
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200, default="")  # the entity's (it never changes)

    def __str__(self) -> str:
        return f"{self.signature} -> entity {self.entity_id}"


class EntityAliasSignature(models.Model):
    """One signature of the key of an alias a person recorded (only those serve the typo rule),
    written with the alias and gone with it. Its primary key covers the alias's `key` as
    `EntitySignature`'s does."""

    pk = models.CompositePrimaryKey("signature", "alias")
    signature = models.BigIntegerField()
    alias = models.ForeignKey(EntityAlias, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200, default="")  # the alias's (it never changes)

    def __str__(self) -> str:
        return f"{self.signature} -> alias {self.alias_id}"


class EntityKeyBand(models.Model):
    """How many entities were created with a key of `length` characters or one or two fewer: where
    writers creating entities at the same moment on PostgreSQL meet (`dedup.locks.
    creations_meanwhile`). Keys within two edits are within two characters of length, so two
    such writers update one row at least: the later waits for the earlier's commit and finds
    the count moved since its lookup, and looks again. A row is made by the first creation that
    needs it; SQLite (one writer at a time) writes none."""

    length = models.PositiveSmallIntegerField(primary_key=True)
    created = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"keys of {self.length - 2} to {self.length} characters: {self.created} created"


class Mention(models.Model):
    """A drawer names an entity. The observation keeps the name as the drawer spelled it, the
    rule that resolved it and the confidence; provenance says where the sighting came from."""

    drawer = models.ForeignKey(  # indexed by mention_unique_pair (drawer, entity)
        Drawer, on_delete=models.CASCADE, related_name="mentions", db_index=False
    )
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="mentions")
    observation = models.JSONField(default=dict)
    provenance = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["drawer", "entity"], name="mention_unique_pair"),
        ]

    def __str__(self) -> str:
        return f"{self.drawer_id} mentions {self.entity_id}"


class EntityLink(ReviewedLink):
    """A `possibly_same_as` link: the newer entity resembles the older one."""

    class Status(models.TextChoices):
        OPEN = "open"
        DISMISSED = "dismissed"
        ALIASED = "aliased"
        MERGED = "merged"

    newer = models.ForeignKey(  # indexed by entity_link_unique_pair (newer, older)
        Entity, on_delete=models.CASCADE, related_name="links_to_older", db_index=False
    )
    older = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="links_to_newer")
    distance = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Edits between the keys: 1 is an ambiguous typo."
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)

    class Meta(ReviewedLink.Meta):
        constraints = [
            models.UniqueConstraint(fields=["newer", "older"], name="entity_link_unique_pair"),
            models.CheckConstraint(
                condition=~Q(newer=models.F("older")), name="entity_link_not_to_itself"
            ),
        ]
        indexes = [
            models.Index(fields=["status", "-similarity", "-id"], name="entity_link_queue"),
            models.Index(fields=["status", "-created_at", "-id"], name="entity_link_queue_age"),
            # The queue filtered by rule (typo: distance 1, possible: any other).
            models.Index(
                fields=["status", "distance", "-similarity", "-id"], name="entity_link_queue_rule"
            ),
            # "Most uncertain first" walks below the threshold by similarity downward, ties by id
            # upward (the order of the walk above it): read in order, not sorted (entity links
            # often share one similarity).
            models.Index(fields=["status", "-similarity", "id"], name="entity_link_uncertain"),
        ]
        verbose_name = "possibly_same_as link"

    def __str__(self) -> str:
        return f"{self.newer_id} possibly_same_as {self.older_id} ({self.similarity:.3f})"
