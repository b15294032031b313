"""Keep the candidate indexes in their steady state after bulk loads.

PostgreSQL: VACUUM ANALYZE, so the planner knows the room sizes (it otherwise may scan a room
instead of using the full-text index) and fresh pages are marked visible. Autovacuum does this on
its own after enough writes; run it by hand after a bulk import.
SQLite: merge the FTS5 index's segments (each query probes every segment).
"""

from __future__ import annotations

from django.db import connection


def optimize_candidate_indexes() -> str:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("VACUUM ANALYZE palace_drawer")
            cursor.execute("ANALYZE")  # the links too: the review queue plans on their sizes
            return "vacuumed palace_drawer and analysed every table"
        if connection.vendor == "sqlite":
            cursor.execute("INSERT INTO palace_drawer_fts(palace_drawer_fts) VALUES ('optimize')")
            cursor.execute("ANALYZE")
            return "merged the full-text index segments and analysed"
    return "nothing to do"  # pragma: no cover
