"""Keep the candidate indexes in their steady state after bulk loads.

PostgreSQL: VACUUM ANALYZE, so the planner knows the room sizes (it otherwise may scan a room
instead of using the full-text index) and fresh pages are marked visible: the entity signature
lookups read (owner, key) from their index alone only where the visibility map says a page is all
visible, and read the table beside it until then (after dedup/0011 or `dedup_backfill
--signatures` wrote every row anew). Autovacuum does this on its own after enough writes; run it
by hand after a bulk import or either of those.
SQLite: merge the FTS5 indexes' segments (each query probes every segment): the drawers' full
text and the entity names' trigrams; then write the write-ahead log back and empty it
(`checkpoint_whole_log`): the merges rewrite those indexes, and the log would otherwise keep
their size on disk.
"""

from __future__ import annotations

from django.db import connection

from palace import name_search
from palace.models import Drawer, EntityAliasSignature, EntitySignature

# SQLite's FTS5 tables: the drawers' full text, the entity names' and aliases' trigrams. A bulk
# load leaves one segment per transaction, which each lookup probes and later writes merge.
FTS5_TABLES = ("palace_drawer_fts", *(index for _, _, index in name_search.INDEXED))
# The tables whose candidate lookups rely on fresh pages being marked visible (PostgreSQL).
VACUUMED = tuple(model._meta.db_table for model in (Drawer, EntitySignature, EntityAliasSignature))


def optimize_candidate_indexes() -> str:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"VACUUM ANALYZE {', '.join(VACUUMED)}")
            cursor.execute("ANALYZE")  # the links too: the review queue plans on their sizes
        return f"vacuumed {', '.join(VACUUMED)} and analysed every table"
    with connection.cursor() as cursor:
        for table in FTS5_TABLES:
            cursor.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        cursor.execute("ANALYZE")
    merged = f"merged the segments of {', '.join(FTS5_TABLES)} and analysed"
    if connection.checkpoint_whole_log():  # type: ignore[attr-defined]  # config.sqlite3's
        return f"{merged}; wrote the write-ahead log back"
    return f"{merged}; the write-ahead log is in use: later checkpoints write it back"
