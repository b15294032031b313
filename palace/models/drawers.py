"""Drawers (memories) and the `similar_to` links between them."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from django.db import models
from django.db.models import Q
from django.utils import timezone

if TYPE_CHECKING:
    pass
from palace.models.common import ReviewedLink
from palace.models.places import Room


class DrawerQuerySet(models.QuerySet["Drawer"]):
    def current(self) -> DrawerQuerySet:
        return self.filter(valid_to__isnull=True)


class Drawer(models.Model):
    """One memory. `content` is verbatim and never rewritten; everything used to compare two
    drawers (hash, normalised text, fingerprint) is derived and stored beside it."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    # No index of its own: `drawer_room_newest` (room, -id) leads with it (one index fewer to
    # write per drawer). Likewise for the other foreign keys below marked db_index=False: a
    # unique constraint or an index that starts with the column serves every lookup by it.
    room = models.ForeignKey(Room, on_delete=models.PROTECT, related_name="drawers", db_index=False)
    content = models.TextField()
    content_hash = models.CharField(max_length=64, help_text="SHA-256 of the UTF-8 bytes.")
    normalized_content = models.TextField(
        blank=True, help_text="The text as compared: NFC, casefolded, letters and digits."
    )
    fingerprint = models.CharField(
        max_length=64,
        null=True,
        blank=True,
        help_text="SHA-256 of the normalised text; empty when it has no letter or digit.",
    )
    # What the full-text index holds instead of the normalised text's words, for the few texts
    # whose words differ (a sentence of Chinese, Japanese or Thai is one "word": it is cut into
    # pieces, `dedup.policy.index_text`); null for every other text (`palace.fulltext`).
    index_text = models.TextField(
        null=True,
        blank=True,
        editable=False,
        help_text="The words the full-text index holds, where they are not the normalised text's.",
    )
    name = models.CharField(max_length=200, null=True, blank=True)
    kind = models.CharField(max_length=32, blank=True, help_text="fact, event, preference, ...")
    agent = models.CharField(max_length=150, blank=True)
    source = models.JSONField(default=dict, blank=True)
    valid_from = models.DateTimeField(default=timezone.now)
    valid_to = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    consolidation = models.JSONField(
        default=dict,
        blank=True,
        help_text="On a canonical drawer: the drawers merged into it, their provenance, the "
        "earliest and latest time the fact was seen, and the count of restatements.",
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = DrawerQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["room", "name"],
                condition=Q(name__isnull=False, valid_to__isnull=True),
                name="drawer_unique_current_name_in_room",
            ),
        ]
        indexes = [
            models.Index(
                fields=["room", "content_hash"],
                condition=Q(valid_to__isnull=True),
                name="drawer_current_hash",
            ),
            models.Index(
                fields=["room", "fingerprint"],
                condition=Q(valid_to__isnull=True),
                name="drawer_current_fingerprint",
            ),
            models.Index(fields=["room", "-id"], name="drawer_room_newest"),
        ]
        permissions = [("write_as_any_agent", "Can write diary entries as another agent")]

    def __str__(self) -> str:
        preview = self.content[:60].replace("\n", " ")
        return f"{preview}…" if len(self.content) > 60 else preview

    @property
    def is_current(self) -> bool:
        return self.valid_to is None


class DrawerRestatement(models.Model):
    """A drawer a later write stated again (an exact copy, or the same named drawer), answered
    with the drawer rather than stored twice: someone counts on it, so an import's reversal keeps
    it. A row of its own, inserted once, rather than a column of the drawer: an UPDATE of the
    drawer would wait for a merge or a revert holding it, which waits for the room's writes the
    write holds; a row that refers to it holds the drawer FOR KEY SHARE only, as the write does
    before inserting it (`dedup.services.drawers._restated`)."""

    drawer = models.OneToOneField(
        Drawer, primary_key=True, on_delete=models.CASCADE, related_name="restatement"
    )
    first_at = models.DateTimeField(default=timezone.now, editable=False)

    def __str__(self) -> str:
        return f"drawer {self.drawer_id} restated since {self.first_at:%Y-%m-%d %H:%M}"


# The permission a curator holds (declared on DrawerLink below): may decide review items, in the
# console, the API and the admin alike; an import keeps a curator's alias only for one.
DECIDE_PERMISSION = "palace.decide"


class DrawerLink(ReviewedLink):
    """A `similar_to` link: the newer drawer resembles the older one, with the evidence."""

    class Verdict(models.TextChoices):
        EXACT = "exact"
        NORMALIZED = "normalized"
        NEAR = "near"

    class Status(models.TextChoices):
        OPEN = "open"
        DISMISSED = "dismissed"
        MERGED = "merged"

    newer = models.ForeignKey(  # indexed by drawer_link_unique_pair (newer, older)
        Drawer, on_delete=models.CASCADE, related_name="links_to_older", db_index=False
    )
    older = models.ForeignKey(Drawer, on_delete=models.CASCADE, related_name="links_to_newer")
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    signals = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)

    class Meta(ReviewedLink.Meta):
        constraints = [
            models.UniqueConstraint(fields=["newer", "older"], name="drawer_link_unique_pair"),
            models.CheckConstraint(
                condition=~Q(newer=models.F("older")), name="drawer_link_not_to_itself"
            ),
        ]
        indexes = [
            models.Index(fields=["status", "-similarity", "-id"], name="drawer_link_queue"),
            models.Index(fields=["status", "-created_at", "-id"], name="drawer_link_queue_age"),
            # The queue filtered by rule (a verdict): its page and its capped count read this
            # index alone, however rare the verdict.
            models.Index(
                fields=["status", "verdict", "-similarity", "-id"], name="drawer_link_queue_rule"
            ),
            # "Most uncertain first" below the threshold: similarity downward, ties by id upward.
            models.Index(fields=["status", "-similarity", "id"], name="drawer_link_uncertain"),
        ]
        permissions = [("decide", "Can decide review items (curator)")]  # DECIDE_PERMISSION
        verbose_name = "similar_to link"

    def __str__(self) -> str:
        return f"{self.newer_id} similar_to {self.older_id} ({self.verdict} {self.similarity:.3f})"
