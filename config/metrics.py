"""`/metrics` for Prometheus: requests and latencies (config/observability.py), writes by verdict,
entities by rule and decisions by action (dedup/metrics.py), and the review queue's size.

Under gunicorn every worker process writes its counters to PROMETHEUS_MULTIPROC_DIR (the gunicorn
config sets one) and a scrape, answered by any worker, adds them up. The queue size is a gauge
computed by the scraping process itself: two counts over indexed status columns.

Who may read it: with CASTELLAN_METRICS_TOKEN set, a request carrying
`Authorization: Bearer <token>`; without it, nobody unless DEBUG is on (404 otherwise, as if there
were no such page). Like the health checks it is exempt from the HTTPS redirect, so Prometheus can
scrape gunicorn directly on the internal network.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterable

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from config.errors import read_only_machine_endpoint
from palace.models import DrawerLink, EntityLink


class QueueCollector(Collector):
    """The open review items, by kind, counted when scraped."""

    def collect(self) -> Iterable[Metric]:
        gauge = GaugeMetricFamily(
            "castellan_review_queue_open", "Open review items, by kind.", labels=["kind"]
        )
        gauge.add_metric(
            ["drawer"], DrawerLink.objects.filter(status=DrawerLink.Status.OPEN).count()
        )
        gauge.add_metric(
            ["entity"], EntityLink.objects.filter(status=EntityLink.Status.OPEN).count()
        )
        yield gauge


def allowed(request: HttpRequest) -> bool:
    token = getattr(settings, "CASTELLAN_METRICS_TOKEN", "")
    if not token:
        return bool(settings.DEBUG)
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip(), token)


def exposition() -> bytes:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        processes = generate_latest(registry)
    else:
        processes = generate_latest(REGISTRY)
    queue = CollectorRegistry(auto_describe=False)
    queue.register(QueueCollector())
    return processes + generate_latest(queue)


@login_not_required
@never_cache
@read_only_machine_endpoint
def metrics_view(request: HttpRequest) -> HttpResponse:
    if not allowed(request):
        raise Http404
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
