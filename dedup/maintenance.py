"""Keep the candidate indexes in their steady state after bulk loads.

PostgreSQL: VACUUM ANALYZE, so the planner knows the room sizes (it otherwise may scan a room
instead of using the full-text index) and fresh pages are marked visible: the entity signature
lookups read (owner, key) from their index alone only where the visibility map says a page is all
visible, and read the table beside it until then (after dedup/0011 or `dedup_backfill
--signatures` wrote every row anew). Autovacuum does this on its own after enough writes; run it
by hand after a bulk import or either of those. A bulk write (an import) analyses the tables it
grows as it goes (`analysed_if_grown`).
SQLite: merge the FTS5 indexes' segments (each query probes every segment): the drawers' full
text and the entity names' trigrams; then write the write-ahead log back and empty it
(`checkpoint_whole_log`): the merges rewrite those indexes, and the log would otherwise keep
their size on disk.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, connection, transaction

from palace import name_search
from palace.models import (
    Drawer,
    DrawerLink,
    Entity,
    EntityAliasSignature,
    EntityLink,
    EntitySignature,
)

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


logger = logging.getLogger("castellan.dedup")

# The tables a bulk write grows whose statistics the write path's plans read, and how many rows
# must have changed since their last analysis (and at least their size) before they are analysed
# again (`analysed_if_grown`).
GROWN = (*VACUUMED, *(model._meta.db_table for model in (DrawerLink, Entity, EntityLink)))
GROWN_ROWS = 1000


def analysed_if_grown() -> list[str]:
    """PostgreSQL: ANALYZE each of the GROWN tables changed by at least its size and GROWN_ROWS
    since its last analysis (never analysed: its size unknown), so the candidate functions' plans,
    cached per connection and made again only when a table they read is analysed, follow its
    growth. A plan made on an empty table kept scanning a room for exact copies (an import of
    6,000 drawers into a new store fell from 88 to 22 records a second, 31 s against 2 min 29 s
    with one ANALYZE early) wherever autovacuum is off or late. One catalogue read; an ANALYZE
    samples a table (a fraction of a second) and blocks no write. The tables analysed (none on
    SQLite, whose plans do not follow the statistics so)."""
    if connection.vendor != "postgresql":
        return []
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid "
                "WHERE s.relname = ANY(%s) AND s.n_mod_since_analyze >= greatest(%s, c.reltuples)",
                [list(GROWN), GROWN_ROWS],
            )
            grown = [table for (table,) in cursor.fetchall()]
            if grown:  # a table another maintenance holds (a VACUUM) is left for the next time
                cursor.execute(f"ANALYZE (SKIP_LOCKED) {', '.join(grown)}")
    except DatabaseError as error:  # only a help to the plans: never fails the write it follows
        logger.warning("analysing the grown tables: %s", error)
        return []
    return grown
