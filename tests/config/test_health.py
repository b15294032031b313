"""/healthz and /readyz: what a load balancer and an orchestrator see."""

from __future__ import annotations

import pytest
from django.db import OperationalError, connection
from django.test import Client

from config import health

pytestmark = pytest.mark.django_db


def test_healthz_answers_anonymous_without_touching_the_database(client, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]


def test_readyz_is_ok_when_every_migration_is_applied(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}


def test_readyz_names_unapplied_migrations_with_503(client, monkeypatch):
    waiting = (("palace", "9999_not_yet"), ())
    code = health.code_migrations()
    monkeypatch.setattr(health, "code_migrations", lambda: (*code, waiting))
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "database": "ok",
        "unapplied_migrations": ["palace.9999_not_yet"],
    }


def test_readyz_counts_a_squashed_migration_applied_when_what_it_replaces_is(client, monkeypatch):
    squashed = (("palace", "0001_squashed"), (("palace", "0001_initial"),))
    code = health.code_migrations()
    monkeypatch.setattr(health, "code_migrations", lambda: (*code, squashed))
    assert client.get("/readyz").status_code == 200


def test_readyz_is_503_when_the_database_does_not_answer(client, monkeypatch):
    def refuse(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(connection, "cursor", refuse)
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "database": "error",
        "error": "OperationalError",
    }


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_probes_are_exempt_from_the_https_redirect_and_from_login(client, settings, path):
    settings.SECURE_SSL_REDIRECT = True
    settings.MIDDLEWARE = [
        *settings.MIDDLEWARE,
        "django.contrib.auth.middleware.LoginRequiredMiddleware",
    ]
    assert client.get(path).status_code == 200
    assert client.get("/accounts/login/").status_code == 301


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/metrics"])
@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_probes_answer_reads_only_in_json(method, path):
    """A POST met the CSRF check first (a 403 HTML page, a helper's trial); now the machines'
    JSON 405, as the API's."""
    response = getattr(Client(enforce_csrf_checks=True), method)(path)
    assert response.status_code == 405
    assert response.json()["code"] == "method_not_allowed"
    assert response["Allow"] == "GET, HEAD"


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/metrics"])
def test_a_host_outside_allowed_hosts_is_refused_in_json_at_the_machines_endpoints(client, path):
    """A load balancer or a scraper reads JSON, as the API answers, not Django's HTML page."""
    response = client.get(path, HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert response.json() == {
        "error": "This server does not answer for the host 'evil.example' (ALLOWED_HOSTS).",
        "code": "invalid",
    }


def test_a_console_page_keeps_its_html_error_page(client):
    response = client.get("/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
