"""The detector's measured precision and the queue's size over time."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from review import charts, selectors


@login_required
@require_GET
def stats(request: HttpRequest) -> HttpResponse:
    numbers = selectors.precision_stats()
    return render(
        request,
        "review/stats.html",
        {
            "stats": numbers,
            "precision_chart": charts.precision_bars(numbers["tiers"]),
            "queue_chart": charts.queue_line(numbers["queue"]),
        },
    )
