"""A body cut short: the client sent its headers and part of the body, then its connection broke
(or it left). The server's read of the body fails (`UnreadablePostError`), which answered 500
with a traceback logged (the concurrency trial: 17 in one storm, each an error to page on). It
is a 400 `invalid` now, as bad input, and nothing is written; a real gunicorn's answer is in
tests/deploy/test_gunicorn.py.

A connection half-closed (`shutdown(SHUT_WR)`) after part of the body ends the body without an
error: gunicorn's read brings what came, and a part that is valid JSON was stored (201). The WSGI
entry point (config/wsgi.py) refuses a body shorter than its Content-Length the same way."""

from __future__ import annotations

import io
import json
from wsgiref.util import setup_testing_defaults

import pytest
from django.core.signals import request_started
from django.db import close_old_connections
from django.test import Client
from rest_framework.authtoken.models import Token

from api.errors import UNREADABLE_BODY
from config.wsgi import application
from tests.api.conftest import api_client, row_counts

pytestmark = pytest.mark.django_db

BODY = b'{"content": "The backups run at noon."}'


class CutShort:
    """A request body whose connection broke before it was read (`wsgi.input`)."""

    def read(self, *args: object) -> bytes:
        raise OSError(104, "Connection reset by peer")

    readline = read


class TooSlow(CutShort):
    """One that did not arrive before gunicorn's deadline (config/gunicorn.py, BodyDeadline)."""

    def read(self, *args: object) -> bytes:
        raise TimeoutError("the whole body did not arrive within 30 seconds of the request's head")


def cut_short(stream: CutShort | None = None) -> dict:
    return {"wsgi.input": stream or CutShort(), "CONTENT_LENGTH": str(len(BODY))}


@pytest.mark.parametrize(
    "path", ["/api/wings/ops/rooms/dev/drawers", "/api/diary", "/api/review/items/{item}/decisions"]
)
def test_an_api_body_cut_short_is_invalid_and_writes_nothing(world, path):
    before = row_counts()
    response = api_client(world).post(
        path.format(**world), BODY, content_type="application/json", **cut_short()
    )
    assert response.status_code == 400
    assert response.json() == {"error": UNREADABLE_BODY, "code": "invalid"}
    assert row_counts() == before


def test_a_body_too_slow_to_arrive_is_invalid_saying_so(world):
    before = row_counts()
    response = api_client(world).post(
        "/api/wings/ops/rooms/dev/drawers",
        BODY,
        content_type="application/json",
        **cut_short(TooSlow()),
    )
    assert response.status_code == 400
    assert response.json() == {
        "error": "The body could not be read: the whole body did not arrive within 30 seconds "
        "of the request's head.",
        "code": "invalid",
    }
    assert row_counts() == before


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/", "/bulk"])
def test_a_console_form_cut_short_is_refused(world, path):
    client = Client(raise_request_exception=False)
    client.force_login(world["user"])
    before = row_counts()
    response = client.post(
        path, BODY, content_type="application/x-www-form-urlencoded", **cut_short()
    )
    assert response.status_code == 400
    assert row_counts() == before


class Trickle(io.BytesIO):
    """A body that arrives a few bytes a read, then ends (the client half-closed)."""

    def read(self, size: int | None = -1) -> bytes:
        return super().read(min(7, size) if size is not None and size >= 0 else 7)


def served(world, path: str, sent: bytes, length: int, content_type: str) -> tuple[int, bytes]:
    """A POST through the WSGI entry point gunicorn calls, the body `sent` of a Content-Length
    of `length`: (status, body)."""
    environ: dict = {}
    setup_testing_defaults(environ)
    token = Token.objects.get_or_create(user=world["user"])[0]
    environ.update(
        REQUEST_METHOD="POST",
        PATH_INFO=path,
        HTTP_HOST="testserver",
        CONTENT_TYPE=content_type,
        CONTENT_LENGTH=str(length),
        HTTP_AUTHORIZATION=f"Token {token.key}",
    )
    environ["wsgi.input"] = Trickle(sent)
    started: list[str] = []
    # As Django's test client does: the test's transaction is its connection, which a request's
    # start would close (PostgreSQL; SQLite's in-memory database survives it).
    request_started.disconnect(close_old_connections)
    try:
        answer = b"".join(application(environ, lambda status, headers: started.append(status)))
    finally:
        request_started.connect(close_old_connections)
    return int(started[0].split()[0]), answer


DRAWERS = "/api/wings/ops/rooms/cut/drawers"


def test_a_body_shorter_than_its_content_length_is_invalid_and_writes_nothing(world):
    before = row_counts()
    status, answer = served(world, DRAWERS, BODY, len(BODY) + 20, "application/json")
    assert status == 400
    assert json.loads(answer) == {"error": UNREADABLE_BODY, "code": "invalid"}
    assert row_counts() == before


def test_a_console_form_shorter_than_its_content_length_is_refused(world):
    form = b"username=cora&password=secret-pass-1"
    status, _ = served(
        world, "/accounts/login/", form, len(form) + 20, "application/x-www-form-urlencoded"
    )
    assert status == 400


def test_a_whole_body_read_a_few_bytes_at_a_time_is_stored(world):
    status, answer = served(world, DRAWERS, BODY, len(BODY), "application/json")
    assert status == 201
    assert json.loads(answer)["content"] == "The backups run at noon."
