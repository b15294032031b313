"""Wings and rooms: where drawers live. Both are created on first use by the write path."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import models
from django.utils import timezone

from palace.models.common import LABEL_MAX_LENGTH

if TYPE_CHECKING:
    pass


class Wing(models.Model):
    name = models.CharField(max_length=LABEL_MAX_LENGTH, unique=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


# The room of each agent's diary (a checkpoint's and `POST /api/diary`'s): each agent's entries
# are their own scope, compared with that agent's only, however they are written.
DIARY_ROOM = "diary"


class Room(models.Model):
    wing = models.ForeignKey(  # indexed by room_unique_name_in_wing (wing, name)
        Wing, on_delete=models.PROTECT, related_name="rooms", db_index=False
    )
    name = models.CharField(max_length=LABEL_MAX_LENGTH)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["wing__name", "name"]
        constraints = [
            models.UniqueConstraint(fields=["wing", "name"], name="room_unique_name_in_wing"),
        ]

    def __str__(self) -> str:
        return f"{self.wing.name}/{self.name}"

    @property
    def is_diary(self) -> bool:
        """Its drawers are compared per agent (DIARY_ROOM): by writes, sweeps and merges alike."""
        return self.name == DIARY_ROOM
