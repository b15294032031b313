"""What every write runs under: the deduplication settings, who is writing (the mode), and who
acts (for the audit log)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from django.conf import settings
from django.contrib.auth.models import AnonymousUser

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Who acts: a user (from the API, the console or the admin), or None for a command or a migration.
# The same as the audit log's `palace.models.Actor`, which records it.
Actor: TypeAlias = "User | AnonymousUser | None"


class WriteMode(enum.Enum):
    """Who is writing decides whether an exact copy is refused and whose drawers are compared.

    memory: an exact copy is not stored; every agent's drawers in the room are compared.
    diary:  an exact copy of the same agent's entry is not stored; only that agent's entries.
    mined:  everything is stored (two identical files are two records) and linked.
    Named writes are always stored and linked (the name is the drawer's identity).
    """

    MEMORY = "memory"
    DIARY = "diary"
    MINED = "mined"

    @property
    def skips_exact_copy(self) -> bool:
        return self is not WriteMode.MINED

    @property
    def per_agent(self) -> bool:
        return self is WriteMode.DIARY


@dataclass(frozen=True)
class DedupConfig:
    enabled: bool
    near_threshold: float
    entity_fuzzy: bool

    @classmethod
    def from_settings(cls) -> DedupConfig:
        return cls(
            enabled=settings.CASTELLAN_DEDUP_ENABLED,
            near_threshold=settings.CASTELLAN_DEDUP_NEAR_THRESHOLD,
            entity_fuzzy=settings.CASTELLAN_DEDUP_ENTITY_FUZZY,
        )
