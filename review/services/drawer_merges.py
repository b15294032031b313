"""A drawer merge's two halves that outlive the decision class: the canonical drawer's record of
what was merged into it (`consolidated`), and making a merged-away drawer current again on undo
(`make_current`), refused where the write path would not have stored it beside an exact copy."""

from __future__ import annotations

from datetime import datetime

from dedup.errors import Conflict
from dedup.locks import hold_lock, room_writes
from dedup.mining import MINED_SOURCE_KIND
from palace.models import Drawer


def make_current(drawer_id: int, *, beside: int, merged_at: datetime | None = None) -> None:
    """Make a merged-away drawer current again, unless that puts it beside a current exact copy
    written since the merge (`merged_at`), which the write path would not have stored beside it.
    `beside`, the merge's kept drawer, and copies older than the merge do not count: they were
    there beside it before (a sweep that merged three copies is undone whole)."""
    drawer = Drawer.objects.select_related("room").get(pk=drawer_id)
    hold_lock(room_writes(drawer.room_id))  # the write path's lock
    copy = _exact_copy_of(drawer, beside=beside, since=merged_at)
    if copy is not None:
        raise Conflict(
            "Reverting would make this drawer current beside a drawer with the same text, "
            "written since; supersede or delete that one first.",
            code="revert_would_duplicate",
            details={"drawer": str(drawer.uuid), "copy": str(copy.uuid)},
        )
    Drawer.objects.filter(pk=drawer_id).update(valid_to=None, superseded_by=None)


def merged_at(after: dict) -> datetime | None:
    """When a merge superseded its other drawer, from the decision's `after` snapshot."""
    valid_to = (after.get("other") or {}).get("valid_to")
    return datetime.fromisoformat(valid_to) if valid_to else None


def _exact_copy_of(drawer: Drawer, *, beside: int, since: datetime | None) -> Drawer | None:
    """A current drawer with the same bytes in the drawer's scope (its room; in a diary, the same
    agent's entries), written after `since` if given, where neither is named or mined (those are
    always stored)."""
    if _kept_beside_copies(drawer):
        return None
    copies = Drawer.objects.current().filter(
        room_id=drawer.room_id, content_hash=drawer.content_hash
    )
    if since is not None:
        copies = copies.filter(created_at__gt=since)
    if drawer.room.is_diary:
        copies = copies.filter(agent=drawer.agent)
    copies = copies.exclude(pk__in=(drawer.pk, beside)).order_by("pk")
    return next((c for c in copies if not _kept_beside_copies(c)), None)


def _kept_beside_copies(drawer: Drawer) -> bool:
    return drawer.name is not None or (drawer.source or {}).get("kind") == MINED_SOURCE_KIND


def consolidated(keep: Drawer, other: Drawer) -> dict:
    """The canonical drawer's record of everything merged into it: every contributing drawer
    with its provenance, the earliest and latest time the fact was seen, and the restatements."""

    def own(drawer: Drawer) -> list[dict]:
        return drawer.consolidation.get("sources") or [
            {
                "drawer": str(drawer.uuid),
                "agent": drawer.agent,
                "source": drawer.source,
                "seen_at": drawer.created_at.isoformat(),
            }
        ]

    sources = own(keep)
    known = {s["drawer"] for s in sources}
    sources += [s for s in own(other) if s["drawer"] not in known]
    seen = sorted(s["seen_at"] for s in sources)
    return {
        "sources": sources,
        "first_seen": seen[0],
        "last_seen": seen[-1],
        "restatements": len(sources) - 1,
    }
