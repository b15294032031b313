"""Pairs a curator said are not the same, so they are never linked again."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import models
from django.db.models import Q
from django.utils import timezone

if TYPE_CHECKING:
    pass
from palace.models.drawers import Drawer
from palace.models.entities import Entity


class DistinctPair(models.Model):
    """Two drawers or two entities a curator said are not the same: never linked again.

    The pair is held by the foreign keys of its kind (`low_drawer`/`high_drawer` or
    `low_entity`/`high_entity`, the smaller internal id first); the other kind's are empty. It
    goes with either of its rows: it exists to stop a link between the two, and a deleted row can
    be linked to nothing.
    """

    class Kind(models.TextChoices):
        DRAWER = "drawer"
        ENTITY = "entity"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    # The low sides are indexed by the unique constraints, which lead with them.
    low_drawer = models.ForeignKey(
        Drawer, null=True, blank=True, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    high_drawer = models.ForeignKey(
        Drawer, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    low_entity = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    high_entity = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["low_drawer", "high_drawer"], name="distinct_pair_unique_drawers"
            ),
            models.UniqueConstraint(
                fields=["low_entity", "high_entity"], name="distinct_pair_unique_entities"
            ),
            models.CheckConstraint(
                condition=Q(
                    kind="drawer",
                    low_drawer__lt=models.F("high_drawer"),
                    low_entity__isnull=True,
                    high_entity__isnull=True,
                )
                | Q(
                    kind="entity",
                    low_entity__lt=models.F("high_entity"),
                    low_drawer__isnull=True,
                    high_drawer__isnull=True,
                ),
                name="distinct_pair_ordered_of_its_kind",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.low} is not {self.high}"

    @property
    def low(self) -> int | None:
        """The smaller internal id of the pair."""
        return self.low_drawer_id if self.kind == self.Kind.DRAWER else self.low_entity_id

    @property
    def high(self) -> int | None:
        return self.high_drawer_id if self.kind == self.Kind.DRAWER else self.high_entity_id

    @classmethod
    def ordered(cls, a: int, b: int) -> tuple[int, int]:
        return (a, b) if a < b else (b, a)

    @classmethod
    def columns(cls, kind: str) -> tuple[str, str]:
        """The (low, high) foreign keys that hold a pair of this kind."""
        return (f"low_{kind}", f"high_{kind}")

    @classmethod
    def of(cls, kind: str, a: int, b: int) -> dict[str, Any]:
        """The lookup of the pair of `a` and `b`, in either order: for `filter` and
        `get_or_create`."""
        low, high = cls.ordered(a, b)
        low_column, high_column = cls.columns(cls.Kind(kind))
        return {"kind": kind, f"{low_column}_id": low, f"{high_column}_id": high}
