"""The WSGI entry point reads a request's host as HTTP/1.1 has it (config/wsgi.py), on the
environ gunicorn hands on (its `RAW_URI` holds the target as sent). The deploy test sends the
same requests to gunicorn itself (tests/deploy/test_gunicorn.py)."""

from __future__ import annotations

import json
from wsgiref.util import setup_testing_defaults

import pytest

from config.wsgi import MISSING_HOST, application

pytestmark = pytest.mark.django_db


def served(target: str, host: str | None, protocol: str = "HTTP/1.1") -> tuple[str, dict]:
    """The status line's status and the JSON body of a GET of /healthz sent with `target`."""
    environ: dict = {}
    setup_testing_defaults(environ)  # a Host header of its own too
    environ.update(RAW_URI=target, SERVER_PROTOCOL=protocol, SERVER_NAME="localhost")
    environ.update(PATH_INFO="/healthz", HTTP_HOST=host)
    if host is None:
        del environ["HTTP_HOST"]
    started: list[str] = []
    body = b"".join(application(environ, lambda status, headers: started.append(status)))
    return started[0], json.loads(body)


@pytest.fixture(autouse=True)
def allowed(settings):
    settings.ALLOWED_HOSTS = ["localhost"]


def test_a_target_in_origin_form_is_served_for_its_host_header():
    assert served("/healthz", "localhost")[0] == "200 OK"


def test_a_target_in_absolute_form_naming_another_host_is_refused():
    """The Host header named an allowed host: gunicorn handed it on, and Django served it."""
    status, body = served("http://evil.example/healthz", "localhost")
    assert status.startswith("400")
    assert (
        body["error"] == "This server does not answer for the host 'evil.example' (ALLOWED_HOSTS)."
    )


@pytest.mark.parametrize("scheme", ["http", "HTTPS"])
def test_a_target_in_absolute_form_naming_an_allowed_host_is_served_whatever_the_header(scheme):
    assert served(f"{scheme}://localhost/healthz", "evil.example")[0] == "200 OK"


def test_a_target_in_absolute_form_naming_no_host_is_refused():
    status, body = served("http:///healthz", "localhost")
    assert status.startswith("400")
    assert body["code"] == "invalid"


def test_an_http_1_1_request_without_a_host_header_is_refused():
    status, body = served("/healthz", None)
    assert status == "400 Bad Request"
    assert body == {"error": f"Bad Request: {MISSING_HOST}", "code": "invalid"}


def test_an_http_1_0_request_may_go_without_one():
    assert served("/healthz", None, protocol="HTTP/1.0")[0] == "200 OK"


def test_a_target_in_absolute_form_is_no_host_header():
    """RFC 9112, 3.2: the header is required whatever the target (h11 refuses it too)."""
    status, body = served("http://localhost/healthz", None)
    assert status == "400 Bad Request"
    assert body["error"] == f"Bad Request: {MISSING_HOST}"
