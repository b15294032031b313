"""The migrations leave the full-text index live, whatever later migrations rebuilt."""

import pytest
from django.db import connection

from palace.fulltext import SQLITE_TRIGGERS

pytestmark = pytest.mark.django_db


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite triggers")
def test_fulltext_triggers_survive_table_rebuilds():
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        assert {row[0] for row in cursor.fetchall()} >= SQLITE_TRIGGERS


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL index")
def test_fulltext_index_exists_with_fastupdate_off():
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'palace_drawer_fulltext'")
        assert cursor.fetchone()[0] == ["fastupdate=off"]
