"""Checkpoints: batches written under a client-chosen id, replayed by that id."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.utils import timezone

if TYPE_CHECKING:
    pass


class Checkpoint(models.Model):
    """A batch of items written under a client-chosen id, the caller's own; replaying the id
    replays the result."""

    key = models.CharField(max_length=200)  # the caller's own: unique per user (below)
    payload_hash = models.CharField(max_length=64)
    result = models.JSONField(default=dict)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        # Not for no one's (a command's): a deleted user's checkpoints become no one's, and two
        # of them may hold one id (the checkpoint's advisory lock keeps a command's one).
        constraints = [
            models.UniqueConstraint(
                fields=["created_by", "key"],
                condition=models.Q(created_by__isnull=False),
                name="checkpoint_unique_key_per_user",
            ),
        ]

    def __str__(self) -> str:
        return self.key
