"""A bulk write analyses the tables it grew (PostgreSQL): the candidate functions' plans, cached
per connection, are made again only when a table they read is analysed, and one made on an empty
table kept scanning a room for exact copies wherever autovacuum was off or late."""

import pytest
from django.db import connection

from dedup import imports, maintenance, services
from dedup.imports import chunks
from tests.dedup.drawers_data import bulk_drawers
from tests.dedup.imports.test_reverse_own_supersession import castellan, drawer_line

on_postgres = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's plans")


def stats_flushed():
    """This connection's counts of changed rows reach the statistics, read afresh."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_a_table_grown_past_its_size_is_analysed_once(monkeypatch):
    monkeypatch.setattr(maintenance, "GROWN_ROWS", 5)
    room = services.room_get_or_create(wing="w", room="r")
    bulk_drawers(room, [f"Fact {n}: the backup runs at {n}." for n in range(20)])
    stats_flushed()
    assert "palace_drawer" in maintenance.analysed_if_grown()
    stats_flushed()
    assert "palace_drawer" not in maintenance.analysed_if_grown()


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_fewer_rows_than_grown_rows_are_not_analysed():
    stats_flushed()
    maintenance.analysed_if_grown()  # whatever earlier tests changed
    room = services.room_get_or_create(wing="w", room="r")
    bulk_drawers(room, [f"Fact {n}: the backup runs at {n}." for n in range(20)])
    stats_flushed()
    assert "palace_drawer" not in maintenance.analysed_if_grown()


@pytest.mark.django_db
def test_an_import_asks_after_each_chunk(tmp_path, monkeypatch):
    asked = []
    monkeypatch.setattr(maintenance, "analysed_if_grown", lambda: asked.append(1) or [])
    monkeypatch.setattr(chunks, "CHUNK_SIZE", 2)
    path = castellan(tmp_path, *(drawer_line(f"d{n}", f"Fact {n} of {n * 31}.") for n in range(5)))
    imported = imports.import_create(source=str(path), format="castellan")
    imports.import_run(imported, path=path)
    assert len(asked) == 3  # two full chunks and the last


def test_sqlite_analyses_nothing_here(monkeypatch):
    monkeypatch.setattr(connection, "vendor", "sqlite")
    assert maintenance.analysed_if_grown() == []


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_a_failure_is_logged_and_fails_nothing(monkeypatch, caplog):
    """Only a help to the plans: an error (here a bad bound) is a warning, never the write's."""
    monkeypatch.setattr(maintenance, "GROWN_ROWS", "many")
    assert maintenance.analysed_if_grown() == []
    assert "analysing the grown tables" in caplog.text
    with connection.cursor() as cursor:  # the connection is usable after it
        cursor.execute("SELECT 1")
