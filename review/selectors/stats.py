"""How good is the detector: measured precision per tier and similarity band, and the queue's
size over the last days."""

from __future__ import annotations

from bisect import bisect_right
from datetime import timedelta
from typing import cast

from django.utils import timezone

from palace.models import AuditAction, AuditEntry, DrawerLink, EntityLink
from review.selectors.audit import not_reverted

BANDS = ((0.0, 0.9), (0.9, 0.95), (0.95, 0.98), (0.98, 1.0), (1.0, 1.01))
SETTLED_SAME = (DrawerLink.Status.MERGED, EntityLink.Status.ALIASED, EntityLink.Status.MERGED)
OPEN = DrawerLink.Status.OPEN  # the undecided state of both link models


def similarity_band(similarity: float) -> str:
    """The band a similarity falls in, as the precision pages and the sweep's sample use it."""
    for low, high in BANDS:
        if low <= similarity < high:
            return f"{low:.2f} to {min(high, 1.0):.2f}" if high <= 1 else "1.00"
    return "1.00"


def _entity_tier(distance: int | None) -> str:
    return "typo candidate" if distance == 1 else "possible match"


class _Tally:
    """Per tier and band: open, settled as the same, found wrong, dismissed."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], dict[str, int]] = {}

    def add(self, tier: str, similarity: float, status: str, deleted: bool = False) -> None:
        row = self.rows.setdefault(
            (tier, similarity_band(similarity)), {"open": 0, "same": 0, "wrong": 0, "dismissed": 0}
        )
        if deleted:
            row["wrong"] += 1
        elif status == OPEN:
            row["open"] += 1
        elif status in SETTLED_SAME:
            row["same"] += 1
        else:
            row["dismissed"] += 1


def precision_stats() -> dict:
    """Per tier and similarity band: how many links were decided, and the share settled as the
    same thing (merge or alias) against those found wrong (delete link). Dismissals count as
    decided but in neither direction."""
    tally = _Tally()
    for verdict, similarity, status in DrawerLink.objects.values_list(
        "verdict", "similarity", "status"
    ):
        tally.add(verdict, similarity, status)
    for distance, similarity, status in EntityLink.objects.values_list(
        "distance", "similarity", "status"
    ):
        tally.add(_entity_tier(distance), similarity, status)
    # Deleted links live on only in the audit log.
    deleted = not_reverted(AuditEntry.objects.filter(action=AuditAction.REVIEW_DELETE_LINK))
    for entry in deleted.only("before"):
        link = cast(dict, entry.before)["link"]  # a deletion records the link it removed
        tier = link.get("verdict") or _entity_tier(link.get("distance"))
        tally.add(tier, link["similarity"], "deleted", deleted=True)
    return {"tiers": _precision_rows(tally), "queue": queue_history()}


def _precision_rows(tally: _Tally) -> list[dict]:
    rows = []
    for (tier, band), row in sorted(tally.rows.items()):
        judged = row["same"] + row["wrong"]
        rows.append(
            {
                "tier": tier,
                "band": band,
                **row,
                "decided": row["same"] + row["wrong"] + row["dismissed"],
                "precision": round(row["same"] / judged, 3) if judged else None,
            }
        )
    return rows


def queue_history(days: int = 14) -> list[dict]:
    """Open items at the end of each of the last days: created up to then, minus decided by then."""
    now = timezone.now()
    created, decided = [], []
    for model in (DrawerLink, EntityLink):
        for created_at, decided_at in model.objects.values_list("created_at", "decided_at"):
            created.append(created_at)
            if decided_at is not None:
                decided.append(decided_at)
    created.sort()
    decided.sort()
    points = []
    for back in range(days - 1, -1, -1):
        moment = now - timedelta(days=back)
        open_then = bisect_right(created, moment) - bisect_right(decided, moment)
        points.append({"date": moment.date().isoformat(), "open": open_then})
    return points
