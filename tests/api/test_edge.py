"""The API's edge: every error under /api/ is JSON, whatever failed (an unmatched route, a crash,
a database that is away or busy), and the console keeps its HTML pages."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from django.conf import settings
from django.db import OperationalError, connection
from django.test import Client

from api.models import ALL_WINGS, RIGHTS, AgentKey
from api.views import wings
from dedup.validation import MAX_DEPTH
from palace.models import AuditEntry, Drawer
from review import selectors as review_selectors

pytestmark = pytest.mark.django_db

WRITE = "/api/wings/ops/rooms/dev/drawers"
FACT = {"content": "The backups run at noon."}


@pytest.fixture
def http(user, dedup_settings) -> Client:
    """An API client that answers a crash as a server would, instead of raising it."""
    _, secret = AgentKey.objects.issue(agent=user.username, wings=(ALL_WINGS,), rights=RIGHTS)
    return Client(HTTP_AUTHORIZATION=f"Token {secret}", raise_request_exception=False)


@pytest.fixture
def console(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    "path",
    [
        "/api/wings/",  # a trailing slash
        "/api/sweeps/-1",  # a negative id
        "/api/review/decisions/abc/revert",
        "/api/review/decisions/-3/revert",
        "/api/no-such-thing",
    ],
)
@pytest.mark.parametrize("debug", [False, True], ids=["debug off", "debug on"])
def test_an_unmatched_api_route_is_a_json_404(http, path, debug, settings):
    settings.DEBUG = debug  # `make run`'s development server too, not Django's HTML debug page
    response = http.post(path, {}, content_type="application/json")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == "not_found"


@pytest.mark.parametrize("path", ["/api/docs", "/api/schema"])
@pytest.mark.parametrize("debug", [False, True], ids=["debug off", "debug on"])
def test_a_route_asked_without_its_slash_is_redirected_to_it(http, path, debug, settings):
    """As Django's APPEND_SLASH does, which the catch-all 404 route would otherwise preempt."""
    settings.DEBUG = debug
    response = http.get(path)
    assert (response.status_code, response["Location"]) == (301, f"{path}/")


def test_the_console_keeps_its_html_404(console):
    response = console.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_a_crash_under_the_api_is_a_json_500(http, monkeypatch):
    def crash():
        raise RuntimeError("a bug")

    monkeypatch.setattr(wings.selectors, "wings_with_rooms", crash)
    response = http.get("/api/wings")
    assert response.status_code == 500
    assert response.json() == {"error": "Internal server error.", "code": "server_error"}


def test_json_nested_too_deep_is_invalid_json(http):
    for depth in (MAX_DEPTH + 1, 950, 100_000):
        body = '{"content": "x", "source": ' + "[" * depth + "]" * depth + "}"
        response = http.post(WRITE, body, content_type="application/json")
        assert response.status_code == 400, depth
        assert response.json()["code"] == "invalid_json", depth
    assert not Drawer.objects.exists()


def test_json_nested_within_the_limit_is_accepted(http):
    nested: dict = {}
    for _ in range(MAX_DEPTH - 2):
        nested = {"a": nested}
    response = http.post(WRITE, {**FACT, "source": nested}, content_type="application/json")
    assert response.status_code == 201


def test_connection_health_checks_are_on():
    assert settings.DATABASES["default"]["CONN_HEALTH_CHECKS"] is True


def test_an_unreachable_database_is_a_json_503(http, console, monkeypatch):
    def refused(*args, **kwargs):  # as Django wraps psycopg's (a connection error: no SQLSTATE)
        message = "connection to server at 127.0.0.1 port 1 failed"
        raise OperationalError(message) from psycopg.OperationalError(message)

    monkeypatch.setattr(wings.selectors, "wings_with_rooms", refused)
    response = http.get("/api/wings")
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["code"] == "database_unavailable"


def test_the_console_answers_a_plain_503_page(console, monkeypatch):
    def refused(*args, **kwargs):
        message = "server closed the connection unexpectedly"
        raise OperationalError(message) from psycopg.OperationalError(message)

    monkeypatch.setattr(review_selectors, "audit_entries", refused)
    response = console.get("/audit/")
    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/html")
    assert "database is unavailable" in response.content.decode()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="kills a PostgreSQL backend")
def test_a_killed_connection_is_a_json_503_and_writes_nothing(http):
    assert http.get("/api/wings").status_code == 200
    params = connection.get_connection_params()
    with psycopg.connect(**{k: v for k, v in params.items() if k != "cursor_factory"}) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [connection.connection.info.backend_pid])
    response = http.post(WRITE, FACT, content_type="application/json")
    assert response.status_code == 503
    assert response.json()["code"] == "database_unavailable"
    connection.close()
    assert not Drawer.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's write lock")
def test_a_held_sqlite_write_lock_makes_a_write_answer_503_not_500(http):
    name = connection.settings_dict["NAME"]
    holder = sqlite3.connect(name, uri=name.startswith("file:"), timeout=0)
    try:
        holder.execute("BEGIN IMMEDIATE")
        holder.execute("UPDATE django_session SET expire_date = expire_date")
        response = http.post(WRITE, FACT, content_type="application/json")
    finally:
        holder.rollback()
        holder.close()
    assert response.status_code == 503
    assert response["Retry-After"] == "5"  # the lock was waited on for its whole timeout
    assert response.json()["code"] == "database_busy"
    assert not Drawer.objects.exists()
    assert not AuditEntry.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's write lock")
@pytest.mark.parametrize(
    "path", ["/api/wings", "/api/entities", "/api/review/decisions", "/api/wings/ops"]
)
def test_reads_take_no_write_lock(http, path):
    """`transaction_mode = IMMEDIATE` makes every atomic block take the write lock: reads open
    none, so they answer while a writer holds it."""
    name = connection.settings_dict["NAME"]
    holder = sqlite3.connect(name, uri=name.startswith("file:"), timeout=0)
    try:
        holder.execute("BEGIN IMMEDIATE")
        response = http.get(path)
    finally:
        holder.rollback()
        holder.close()
    assert response.status_code in (200, 404)


@pytest.mark.parametrize("method", ["options", "post", "put", "patch", "delete"])
@pytest.mark.parametrize("path", ["/api/schema/", "/api/docs/"])
def test_the_schema_and_its_docs_refuse_other_methods_in_json(method, path):
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    response = getattr(client, method)(path)
    assert response.status_code == 405
    assert response.json()["code"] == "method_not_allowed"


@pytest.mark.parametrize("path", ["/api/schema/", "/api/docs/"])
def test_the_schema_and_its_docs_are_read(path):
    assert Client().get(path).status_code == 200


@pytest.mark.parametrize("value", ["xyz", "", "html"])
def test_the_schema_refuses_a_format_it_does_not_write_in_json(value):
    response = Client().get(f"/api/schema/?format={value}")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert response.json()["details"] == {"field": "format"}


@pytest.mark.parametrize("value", ["json", "yaml"])
def test_the_schema_is_written_in_its_own_formats(value):
    assert Client().get(f"/api/schema/?format={value}").status_code == 200


@pytest.mark.parametrize(
    ("path", "accept"),
    [("/api/schema/", "text/html"), ("/api/docs/", "application/xml")],
)
def test_an_accept_the_schema_or_docs_cannot_meet_is_refused_in_json(path, accept):
    """A helper's trial: the schema's 406 was written in YAML, the docs' was an HTML page."""
    response = Client().get(path, HTTP_ACCEPT=accept)
    assert response.status_code == 406
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == "not_acceptable"


@pytest.mark.parametrize("value", ["xml", "api", "yaml"])
def test_a_format_the_api_does_not_answer_in_is_invalid_not_a_404(http, value):
    """`?format=xml` on a route that exists was 404 `not_found`, "Not found."."""
    response = http.get(f"/api/wings?format={value}")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert response.json()["details"] == {"field": "format"}


def test_format_json_is_answered(http):
    assert http.get("/api/wings?format=json").status_code == 200
