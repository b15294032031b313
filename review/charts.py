"""Small SVG charts rendered on the server: no JavaScript, no external library, readable without
colour (every bar and point carries its number as text).

Each chart is drawn twice, for a desktop (640 units wide) and for a phone (320 units wide), and
review.css shows one of the two: the wide drawing scaled down to a phone's 335 px drew its 12 px
text at 6 px. The narrow one is shown up to 640 px and never wider than 400 px, so its text is
drawn at 12 to 15 CSS px; the wide one from 641 px, at 11 px and more."""

from __future__ import annotations

import math

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

WIDTH = 640
NARROW = 320
BAR = 22
GAP = 8
LABEL = 220
DIGIT = 7.5  # a 12 px digit's width, about


def _svg(width: int, height: int, variant: str, label: str) -> str:
    return (
        f'<svg class="chart chart-{variant}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{label}">'
    )


def precision_bars(rows: list[dict]) -> SafeString:
    """One bar per tier and band: the measured precision (share settled as the same)."""
    measured = [r for r in rows if r["precision"] is not None]
    if not measured:
        return mark_safe(
            '<p class="muted">No link has been settled as the same or as wrong yet.</p>'
        )
    # every value below is a number or escaped
    return mark_safe(_bars_wide(measured) + _bars_narrow(measured))


def _bars_wide(measured: list[dict]) -> str:
    """A row a bar: its label to the left, its value to the right."""
    height = len(measured) * (BAR + GAP) + GAP
    scale = WIDTH - LABEL - 90
    parts = [_svg(WIDTH, height, "wide", "Measured precision per tier and similarity band")]
    for index, row in enumerate(measured):
        y = GAP + index * (BAR + GAP)
        # The bar is its ratio of the track: empty for 0%, the whole track for 100%.
        width = round(row["precision"] * scale)
        parts.append(
            f'<text x="0" y="{y + 16}" class="chart-label">{_bar_label(row)}</text>'
            f'<rect x="{LABEL}" y="{y}" width="{scale}" height="{BAR}" class="track"></rect>'
            f'<rect x="{LABEL}" y="{y}" width="{width}" height="{BAR}" class="bar"></rect>'
            f'<text x="{LABEL + scale + 6}" y="{y + 16}" class="chart-value">'
            f"{_bar_value(row)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _bars_narrow(measured: list[dict]) -> str:
    """A row a bar with its label above it and its value to its right, the whole width."""
    bar, row_height = 18, 16 + 18 + 10
    height = len(measured) * row_height + 4
    scale = NARROW - 90
    parts = [_svg(NARROW, height, "narrow", "Measured precision per tier and similarity band")]
    for index, row in enumerate(measured):
        y = index * row_height + 16  # the bar's top; its label's baseline 4 above
        width = round(row["precision"] * scale)
        parts.append(
            f'<text x="0" y="{y - 4}" class="chart-label">{_bar_label(row)}</text>'
            f'<rect x="0" y="{y}" width="{scale}" height="{bar}" class="track"></rect>'
            f'<rect x="0" y="{y}" width="{width}" height="{bar}" class="bar"></rect>'
            f'<text x="{scale + 6}" y="{y + 13}" class="chart-value">{_bar_value(row)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _bar_label(row: dict) -> str:
    return escape(f"{row['tier']} {row['band']}")


def _bar_value(row: dict) -> str:
    return f"{row['precision']:.0%} of {row['same'] + row['wrong']}"


def queue_line(points: list[dict]) -> SafeString:
    """Open items at the end of each day."""
    if not points:
        return mark_safe("")
    wide = _line(points, width=WIDTH, left=40, right=20, variant="wide")
    narrow = _line(points, width=NARROW, left=24, right=24, variant="narrow")
    return mark_safe(wide + narrow)  # every value is a number or escaped


def _line(points: list[dict], *, width: int, left: int, right: int, variant: str) -> str:
    step = (width - left - right) / max(1, len(points) - 1)
    widest = max(len(str(p["open"])) for p in points) * DIGIT
    # Numbers too wide to stand above their points side by side are drawn under the axis
    # instead, each below its point, in as many rows taken in turn as keep them apart.
    rows = 0 if widest + 4 <= step else math.ceil((widest + 4) / step)
    below = 14 * rows + 4 if rows else 0
    height, bottom, top = 200 + below, 30 + below, 20
    peak = max(p["open"] for p in points) or 1
    coords = [
        (left + i * step, height - bottom - (p["open"] / peak) * (height - bottom - top))
        for i, p in enumerate(points)
    ]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
    parts = [
        _svg(width, height, variant, "Open review items per day"),
        f'<polyline points="{path}" class="line"></polyline>',
    ]
    for index, ((x, y), point) in enumerate(zip(coords, points, strict=True)):
        at = height - bottom + 18 + 14 * (index % rows) if rows else y - 8
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" class="dot"></circle>')
        parts.append(
            f'<text x="{x:.1f}" y="{at:.1f}" class="chart-value" text-anchor="middle">'
            f"{point['open']}</text>"
        )
    parts.append(
        f'<text x="{left}" y="{height - 8}" class="chart-label">{escape(points[0]["date"])}</text>'
    )
    parts.append(
        f'<text x="{width - right}" y="{height - 8}" class="chart-label" text-anchor="end">'
        f"{escape(points[-1]['date'])}</text>"
    )
    parts.append("</svg>")
    return "".join(parts)
