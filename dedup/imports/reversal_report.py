"""What reversing an import did, as it is reported: whole to the caller, to `import_reverse`'s
command and in the import's audit row; in the import's summary (what `GET /api/imports/{id}`
and the reversal's own answer show) only the first LISTED of each list, beside their counts, as
the import's detail lists its first drawers: a reversal of 100,000 drawers had put every id in
it, megabytes in each answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

LISTED = 100


@dataclass(frozen=True)
class Reversal:
    removed: list[str]
    links_removed: int
    kept: list[dict[str, Any]]
    mentions_removed: list[dict[str, Any]]  # those it recorded on drawers it did not create
    # The rooms ("wing/room") and wings it created and left empty, removed (`places`).
    rooms_removed: list[str] = field(default_factory=list)
    wings_removed: list[str] = field(default_factory=list)

    def as_dict(self, listed: int | None = None) -> dict[str, Any]:
        """Every list whole, or (`listed`) its first so many; with each list's count."""
        lists: dict[str, list[Any]] = {
            "removed": self.removed,
            "kept": self.kept,
            "mentions_removed": self.mentions_removed,
            "rooms_removed": self.rooms_removed,
            "wings_removed": self.wings_removed,
        }
        shown = {
            name: items[:listed] if listed is not None else items for name, items in lists.items()
        }
        return {
            **shown,
            "links_removed": self.links_removed,
            **{f"{name}_count": len(items) for name, items in lists.items()},
        }
