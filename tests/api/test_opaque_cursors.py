"""Every cursor the API gives is sealed (`dedup.cursors`): the search's, a list's (DRF's), the
MCP tools'. Before, each decoded (base64) to the store's global drawer ids, which told how many
drawers the whole store holds. A changed cursor is 400 `invalid_cursor`; pages still cover every
hit once."""

from __future__ import annotations

import base64
import contextlib
import json
from urllib.parse import parse_qs, urlsplit

import pytest

from api.mcp_server import reads
from palace.models import Drawer
from tests.api.mcp_support import ctx_of
from tests.api.test_search import search, write

pytestmark = pytest.mark.django_db

DEPLOY = "Deploy the database migrations before the web servers, attempt"


def cursor_of_link(link: str) -> str:
    (cursor,) = parse_qs(urlsplit(link).query)["cursor"]
    return cursor


def readable(cursor: str) -> bool:
    """Whether the cursor is one of the app's plain ones (JSON or DRF's querystring, base64)."""
    try:
        text = base64.urlsafe_b64decode(cursor + "==").decode("ascii")
    except (ValueError, UnicodeError):
        return False
    with contextlib.suppress(ValueError):
        return isinstance(json.loads(text), list)
    return text.startswith(("p=", "o=", "r="))


def changed(cursor: str) -> str:
    return cursor[:4] + ("A" if cursor[4] != "A" else "B") + cursor[5:]


@pytest.fixture
def written(api) -> list[str]:
    return [write(api, f"{DEPLOY} {n}.") for n in range(5)]


def test_search_pages_cover_every_hit_once(api, written):
    seen, link = [], None
    response = search(api, q="deploy database migrations", limit=2)
    while True:
        body = response.json()
        seen += [hit["drawer"]["id"] for hit in body["results"]]
        if body["next"] is None:
            break
        link = body["next"]
        response = api.get(link)
    assert sorted(seen) == sorted(written)
    assert len(seen) == len(set(seen))


def test_a_search_cursor_holds_no_drawer_id(api, written):
    link = search(api, q="deploy database migrations", limit=2).json()["next"]
    assert not readable(cursor_of_link(link))


def test_a_changed_search_cursor_is_refused(api, written):
    cursor = cursor_of_link(search(api, q="deploy database migrations", limit=2).json()["next"])
    response = search(api, q="deploy database migrations", limit=2, cursor=changed(cursor))
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_cursor"


def test_list_pages_cover_every_drawer_once(api, written):
    seen, link = [], "/api/wings/ops/rooms/runbooks/drawers?page_size=2"
    while link:
        body = api.get(link).json()
        seen += [drawer["id"] for drawer in body["results"]]
        link = body["next"]
    assert sorted(seen) == sorted(written)
    assert len(seen) == len(set(seen))


def test_a_list_cursor_holds_no_drawer_id(api, written):
    link = api.get("/api/wings/ops/rooms/runbooks/drawers?page_size=2").json()["next"]
    assert not readable(cursor_of_link(link))


def test_a_list_s_previous_link_pages_back(api, written):
    first = api.get("/api/wings/ops/rooms/runbooks/drawers?page_size=2").json()
    second = api.get(first["next"]).json()
    back = api.get(second["previous"]).json()
    assert [d["id"] for d in back["results"]] == [d["id"] for d in first["results"]]


def test_a_changed_list_cursor_is_refused(api, written):
    link = api.get("/api/wings/ops/rooms/runbooks/drawers?page_size=2").json()["next"]
    cursor = changed(cursor_of_link(link))
    response = api.get(f"/api/wings/ops/rooms/runbooks/drawers?cursor={cursor}")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_cursor"


def test_an_mcp_list_cursor_holds_no_drawer_id_and_pages(api, written, secret):
    ctx, seen, cursor = ctx_of(secret), [], None
    while True:
        answer = reads.list_drawers(ctx, wing="ops", room="runbooks", limit=2, cursor=cursor)
        seen += [drawer["id"] for drawer in answer["drawers"]]
        cursor = answer["next_cursor"]
        if cursor is None:
            break
        assert not readable(cursor)
    assert sorted(seen) == sorted(written)
    assert Drawer.objects.count() == len(seen)
