"""Small SVG charts rendered on the server: no JavaScript, no external library, readable without
colour (every bar and point carries its number as text)."""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

WIDTH = 640
BAR = 22
GAP = 8
LABEL = 220


def precision_bars(rows: list[dict]) -> SafeString:
    """One bar per tier and band: the measured precision (share settled as the same)."""
    measured = [r for r in rows if r["precision"] is not None]
    if not measured:
        return mark_safe(
            '<p class="muted">No link has been settled as the same or as wrong yet.</p>'
        )
    height = len(measured) * (BAR + GAP) + GAP
    scale = WIDTH - LABEL - 90
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="Measured precision per tier and similarity band">'
    ]
    for index, row in enumerate(measured):
        y = GAP + index * (BAR + GAP)
        # The bar is its ratio of the track: empty for 0%, the whole track for 100%.
        width = round(row["precision"] * scale)
        judged = row["same"] + row["wrong"]
        label = escape(f"{row['tier']} {row['band']}")
        parts.append(
            f'<text x="0" y="{y + 16}" class="chart-label">{label}</text>'
            f'<rect x="{LABEL}" y="{y}" width="{scale}" height="{BAR}" class="track"></rect>'
            f'<rect x="{LABEL}" y="{y}" width="{width}" height="{BAR}" class="bar"></rect>'
            f'<text x="{LABEL + scale + 6}" y="{y + 16}" class="chart-value">'
            f"{row['precision']:.0%} of {judged}</text>"
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # every value above is a number or escaped


def queue_line(points: list[dict]) -> SafeString:
    """Open items at the end of each day."""
    if not points:
        return mark_safe("")
    height, left, bottom = 200, 40, 30
    peak = max(p["open"] for p in points) or 1
    step = (WIDTH - left - 20) / max(1, len(points) - 1)
    coords = [
        (left + i * step, height - bottom - (p["open"] / peak) * (height - bottom - 20))
        for i, p in enumerate(points)
    ]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="Open review items per day">',
        f'<polyline points="{path}" class="line"></polyline>',
    ]
    for (x, y), point in zip(coords, points, strict=True):
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" class="dot"></circle>')
        parts.append(
            f'<text x="{x:.1f}" y="{y - 8:.1f}" class="chart-value" text-anchor="middle">'
            f"{point['open']}</text>"
        )
    parts.append(
        f'<text x="{left}" y="{height - 8}" class="chart-label">{escape(points[0]["date"])}</text>'
    )
    parts.append(
        f'<text x="{WIDTH - 20}" y="{height - 8}" class="chart-label" text-anchor="end">'
        f"{escape(points[-1]['date'])}</text>"
    )
    parts.append("</svg>")
    return mark_safe("".join(parts))
