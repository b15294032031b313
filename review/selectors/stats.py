"""How good is the detector: measured precision per tier and similarity band, and the queue's
size over the last days."""

from __future__ import annotations

from datetime import timedelta
from typing import cast

from django.db.models import Case, CharField, Count, Q, Value, When
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

    def add(self, tier: str, band: str, status: str, count: int = 1, deleted: bool = False) -> None:
        row = self.rows.setdefault((tier, band), {"open": 0, "same": 0, "wrong": 0, "dismissed": 0})
        if deleted:
            row["wrong"] += count
        elif status == OPEN:
            row["open"] += count
        elif status in SETTLED_SAME:
            row["same"] += count
        else:
            row["dismissed"] += count


def _band() -> Case:
    """`similarity_band` of a link's similarity, worked out by the database."""
    bands = (
        When(similarity__gte=low, similarity__lt=high, then=Value(similarity_band(low)))
        for low, high in BANDS
    )
    return Case(*bands, default=Value("1.00"), output_field=CharField())


def precision_stats() -> dict:
    """Per tier and similarity band: how many links were decided, and the share settled as the
    same thing (merge or alias) against those found wrong (delete link). Dismissals count as
    decided but in neither direction."""
    tally = _Tally()
    # Counted by the database per tier, band and status (the links were read one by one: 1.2 s
    # at 146,000 links).
    drawer_links = DrawerLink.objects.order_by().values("verdict", "status", band=_band())
    for row in drawer_links.annotate(count=Count("pk")):
        tally.add(row["verdict"], row["band"], row["status"], row["count"])
    entity_links = EntityLink.objects.order_by().values("distance", "status", band=_band())
    for entity_row in entity_links.annotate(count=Count("pk")):
        tier = _entity_tier(entity_row["distance"])
        tally.add(tier, entity_row["band"], entity_row["status"], entity_row["count"])
    # Deleted links live on only in the audit log.
    deleted = not_reverted(AuditEntry.objects.filter(action=AuditAction.REVIEW_DELETE_LINK))
    for entry in deleted.only("before"):
        link = cast(dict, entry.before)["link"]  # a deletion records the link it removed
        tier = link.get("verdict") or _entity_tier(link.get("distance"))
        tally.add(tier, similarity_band(link["similarity"]), "deleted", deleted=True)
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
    """Open items at the end of each of the last days: created up to then, minus decided by then
    (counted by the database, one query per kind of link, rather than every link read)."""
    now = timezone.now()
    moments = [now - timedelta(days=back) for back in range(days - 1, -1, -1)]
    counts = {
        **{f"created_{i}": Count("pk", filter=Q(created_at__lte=m)) for i, m in enumerate(moments)},
        **{f"decided_{i}": Count("pk", filter=Q(decided_at__lte=m)) for i, m in enumerate(moments)},
    }
    totals = [model.objects.order_by().aggregate(**counts) for model in (DrawerLink, EntityLink)]
    return [
        {
            "date": moment.date().isoformat(),
            "open": sum(t[f"created_{i}"] - t[f"decided_{i}"] for t in totals),
        }
        for i, moment in enumerate(moments)
    ]
