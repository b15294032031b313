"""The app's SQLite cursors rewrite each statement's placeholders as Django's do, once per text
(config/sqlite3: a regular expression over every statement had cost 43 us on the write path)."""

import pytest
from django.db import connection
from django.db.backends.sqlite3.base import SQLiteCursorWrapper

from config.sqlite3.base import CursorWrapper, _qmark_style

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's cursor"),
]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT %s",
        "SELECT %s, %s WHERE 1 = %s",
        "SELECT '100%%', %s",
        "SELECT %s LIKE 'a%%s'",
        "SELECT 1",
    ],
)
def test_a_statement_is_rewritten_as_djangos_own_cursor_does(query):
    assert _qmark_style(query) == SQLiteCursorWrapper.convert_query(None, query)  # type: ignore[arg-type]


def test_the_apps_cursors_are_the_caching_ones():
    with connection.cursor() as cursor:
        assert isinstance(cursor.cursor, CursorWrapper)


def test_a_statement_run_again_is_not_rewritten_again():
    query = "SELECT %s + %s, '5%%' -- test_a_statement_run_again_is_not_rewritten_again"
    with connection.cursor() as cursor:
        cursor.execute(query, [1, 2])
        first = cursor.fetchone()
        misses = _qmark_style.cache_info().misses
        cursor.execute(query, [3, 4])
        second = cursor.fetchone()
    assert first == (3, "5%")
    assert second == (7, "5%")
    assert _qmark_style.cache_info().misses == misses


def test_named_parameters_still_work():
    with connection.cursor() as cursor:
        cursor.execute("SELECT %(a)s * %(b)s", {"a": 6, "b": 7})
        assert cursor.fetchone() == (42,)
