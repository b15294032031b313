"""Checkpoints: batches written under a client-chosen id, replayed by that id."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.utils import timezone

if TYPE_CHECKING:
    pass


class Checkpoint(models.Model):
    """A batch of items written under a client-chosen id; replaying the id replays the result."""

    key = models.CharField(max_length=200, unique=True)
    payload_hash = models.CharField(max_length=64)
    result = models.JSONField(default=dict)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return self.key
