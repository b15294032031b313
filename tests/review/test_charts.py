"""The stats page's charts are drawn wide (a desktop) and narrow (a phone, 320 units, so 12 px
text is 12 px or more on a 375 px screen; review.css shows one of the two), each carrying every
number as text."""

import xml.etree.ElementTree as ET
from itertools import pairwise

from review import charts


def drawings(markup) -> dict[str, ET.Element]:
    root = ET.fromstring(f"<root>{markup}</root>")
    return {svg.get("class").split("-")[-1]: svg for svg in root.iter("svg")}


def row(same: int, wrong: int) -> dict:
    return {"tier": "near", "band": "0.90 to 0.95", "same": same, "wrong": wrong,
            "precision": same / (same + wrong)}  # fmt: skip


def test_the_precision_bars_are_drawn_wide_and_narrow():
    svgs = drawings(charts.precision_bars([row(13, 0), row(0, 2)]))
    assert {name: svg.get("viewBox").split()[2] for name, svg in svgs.items()} == {
        "wide": "640",
        "narrow": "320",
    }
    for svg in svgs.values():
        assert [t.text for t in svg.iter("text")] == [
            "near 0.90 to 0.95",
            "100% of 13",
            "near 0.90 to 0.95",
            "0% of 2",
        ]
    full = svgs["narrow"].findall("rect[@class='bar']")[0]
    assert full.get("width") == str(charts.NARROW - 90)


def test_numbers_too_wide_for_a_narrow_line_stand_in_rows_under_it_none_touching():
    points = [{"date": f"2026-01-{day:02d}", "open": 10_000 + day} for day in range(1, 15)]
    svgs = drawings(charts.queue_line(points))
    wide = [t for t in svgs["wide"].iter("text") if t.get("class") == "chart-value"]
    dots = {dot.get("cx"): float(dot.get("cy")) for dot in svgs["wide"].iter("circle")}
    above = [round(dots[t.get("x")] - float(t.get("y"))) for t in wide]
    assert above == [8] * 14  # each number above its point
    narrow = [t for t in svgs["narrow"].iter("text") if t.get("class") == "chart-value"]
    assert [t.text for t in narrow] == [str(p["open"]) for p in points]
    lowest = max(float(dot.get("cy")) for dot in svgs["narrow"].iter("circle"))
    by_row: dict[str, list[float]] = {}
    for text in narrow:
        assert float(text.get("y")) > lowest
        by_row.setdefault(text.get("y"), []).append(float(text.get("x")))
    assert len(by_row) > 1
    for xs in by_row.values():
        gaps = [b - a for a, b in pairwise(xs)]
        assert min(gaps) > 5 * charts.DIGIT  # five digits
