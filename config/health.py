"""Health checks for a load balancer or an orchestrator: plain Django views, outside the API.

`/healthz` answers while the process serves requests and touches nothing else, so a database
outage does not get every web process restarted. `/readyz` answers 200 only when the database
answers and every migration of the code is applied, so traffic waits for `migrate`.
Both are exempt from the HTTPS redirect (SECURE_REDIRECT_EXEMPT) and from login.
"""

from __future__ import annotations

import functools
import logging

from django.contrib.auth.decorators import login_not_required
from django.db import DatabaseError, connection
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

from config.errors import read_only_machine_endpoint

logger = logging.getLogger("castellan.health")


@login_not_required
@never_cache
@read_only_machine_endpoint
def healthz(request: HttpRequest) -> JsonResponse:
    """The process is up and serving; no database query."""
    return JsonResponse({"status": "ok"})


@functools.cache
def code_migrations() -> tuple[tuple[tuple[str, str], tuple[tuple[str, str], ...]], ...]:
    """Every migration of the code, in the order `migrate` applies them, each with the
    migrations it replaces (a squashed one counts as applied when those are).

    Read from disk once per process: the code does not change under a running process, and
    building the graph on every probe would cost more than the probe itself.
    """
    loader = MigrationLoader(None, ignore_no_migrations=True)
    ordered: dict[tuple[str, str], None] = {}
    for leaf in sorted(loader.graph.leaf_nodes()):
        ordered.update(dict.fromkeys(loader.graph.forwards_plan(leaf)))
    return tuple((key, tuple(loader.graph.nodes[key].replaces or ())) for key in ordered)


def unapplied_migrations() -> list[str]:
    """The code's migrations not yet applied to the database, as `app.name`, in order."""
    applied = set(MigrationRecorder(connection).applied_migrations())
    return [
        f"{app}.{name}"
        for (app, name), replaces in code_migrations()
        if (app, name) not in applied and not (replaces and applied.issuperset(replaces))
    ]


@login_not_required
@never_cache
@read_only_machine_endpoint
def readyz(request: HttpRequest) -> JsonResponse:
    """Ready for traffic: the database answers and no migration is waiting. 503 otherwise."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        unapplied = unapplied_migrations()
    except DatabaseError as error:
        logger.warning("readyz: the database does not answer: %s", error)
        return JsonResponse(
            {"status": "unavailable", "database": "error", "error": type(error).__name__},
            status=503,
        )
    if unapplied:
        return JsonResponse(
            {"status": "unavailable", "database": "ok", "unapplied_migrations": unapplied},
            status=503,
        )
    return JsonResponse({"status": "ok", "database": "ok"})
