"""A body cut short: the client sent its headers and part of the body, then its connection broke
(or it left). The server's read of the body fails (`UnreadablePostError`), which answered 500
with a traceback logged (the concurrency trial: 17 in one storm, each an error to page on). It
is a 400 `invalid` now, as bad input, and nothing is written; a real gunicorn's answer is in
tests/deploy/test_gunicorn.py."""

from __future__ import annotations

import pytest
from django.test import Client

from api.errors import UNREADABLE_BODY
from tests.api.conftest import api_client, row_counts

pytestmark = pytest.mark.django_db

BODY = b'{"content": "The backups run at noon."}'


class CutShort:
    """A request body whose connection broke before it was read (`wsgi.input`)."""

    def read(self, *args: object) -> bytes:
        raise OSError(104, "Connection reset by peer")

    readline = read


def cut_short() -> dict:
    return {"wsgi.input": CutShort(), "CONTENT_LENGTH": str(len(BODY))}


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
