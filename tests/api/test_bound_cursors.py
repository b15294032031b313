"""A cursor is bound to the list that made it (a production trial): a room's drawer-list cursor
was a position in `/api/entities`, `/api/review/decisions` and `/api/sweeps`, a queue cursor made
in similarity order a bound in "most uncertain first", a search's cursor of `q=kestrel` a page
of `q=probe`. Each is 400 `invalid_cursor` now. And one rule reads a cursor everywhere: "" is
the first page, anything else exactly as given (the search trimmed a cursor, and answered
`cursor=%20` 400 `invalid` "may not be blank")."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from api.mcp_server import reads
from palace.models import DrawerLink
from review.selectors.filters import QueueFilters
from review.selectors.queue import cursor_after
from tests.api.conftest import api_client, row_counts
from tests.api.mcp_support import ctx_of

pytestmark = pytest.mark.django_db

ROOM = "/api/wings/ops/rooms/dev/drawers"
PROBES = [f"The kestrel probe stays in the {word} paddock." for word in ("north", "south", "east")]


def cursor_of(link: str) -> str:
    (cursor,) = parse_qs(urlsplit(link).query)["cursor"]
    return cursor


def refused(response: Any) -> bool:
    return response.status_code == 400 and response.json()["code"] == "invalid_cursor"


def mcp_refused(answer: Any) -> bool:
    return answer.is_error and json.loads(answer.content[0].text)["code"] == "invalid_cursor"


@pytest.fixture
def client(world):
    return api_client(world)


@pytest.fixture
def probes(client) -> None:
    for content in PROBES:
        url = "/api/wings/ops/rooms/probes/drawers"
        response = client.post(url, {"content": content}, content_type="application/json")
        assert response.status_code == 201


def room_cursor(client) -> str:
    response = client.get(ROOM, {"page_size": 1})
    return cursor_of(response.json()["next"])


@pytest.mark.parametrize(
    "path",
    [
        "/api/entities",
        "/api/review/decisions",
        "/api/sweeps",
        "/api/wings/ops/rooms/probes/drawers",
    ],
)
def test_a_drawer_list_cursor_is_refused_by_another_list(client, probes, path):
    before = row_counts()
    assert refused(client.get(path, {"cursor": room_cursor(client)}))
    assert row_counts() == before


def test_a_drawer_list_cursor_is_refused_under_other_filters(client):
    assert refused(client.get(ROOM, {"cursor": room_cursor(client), "all": "true"}))


def test_a_drawer_list_cursor_pages_its_own_list_whatever_the_page_size(client):
    response = client.get(ROOM, {"cursor": room_cursor(client), "page_size": 2})
    assert response.status_code == 200
    assert len(response.json()["results"]) == 2


def test_a_room_s_pages_cover_every_drawer_once(client):
    seen, link = [], f"{ROOM}?page_size=1"
    while link:
        body = client.get(link).json()
        seen += [drawer["id"] for drawer in body["results"]]
        link = body["next"]
    assert len(seen) == len(set(seen)) == 3


def test_a_queue_cursor_is_refused_under_another_order(client, world):
    link = DrawerLink.objects.get(pk=int(world["item"][1:]))
    cursor = cursor_after(QueueFilters(order="similarity"), link)
    own = client.get("/api/review/queue", {"order": "similarity", "cursor": cursor})
    assert own.status_code == 200
    assert refused(client.get("/api/review/queue", {"order": "uncertain", "cursor": cursor}))
    assert refused(
        client.get("/api/review/queue", {"order": "similarity", "cursor": cursor, "wing": "ops"})
    )
    assert refused(client.get(ROOM, {"cursor": cursor}))


def test_a_search_cursor_is_refused_for_another_query(client, probes):
    first = client.get("/api/search", {"q": "kestrel", "limit": 1}).json()
    cursor = cursor_of(first["next"])
    own = client.get("/api/search", {"q": "kestrel", "limit": 1, "cursor": cursor})
    assert own.status_code == 200
    assert refused(client.get("/api/search", {"q": "probe", "limit": 1, "cursor": cursor}))
    assert refused(client.get("/api/search", {"q": "kestrel", "wing": "ops", "cursor": cursor}))
    assert refused(client.get(ROOM, {"cursor": cursor}))


def test_a_search_cursor_pages_the_same_search_over_mcp(client, probes, secret):
    cursor = cursor_of(client.get("/api/search", {"q": "kestrel", "limit": 1}).json()["next"])
    answer = reads.search(ctx_of(secret), query="kestrel", limit=1, cursor=cursor)
    assert len(answer["drawers"]) == 1
    assert mcp_refused(reads.search(ctx_of(secret), query="probe", cursor=cursor))


def test_an_mcp_drawer_cursor_is_bound_to_its_room_and_its_filter(probes, secret):
    page = reads.list_drawers(ctx_of(secret), wing="ops", room="probes", limit=1)
    cursor = page["next_cursor"]
    again = reads.list_drawers(ctx_of(secret), wing="ops", room="probes", limit=1, cursor=cursor)
    assert len(again["drawers"]) == 1
    other_room = reads.list_drawers(ctx_of(secret), wing="ops", room="dev", cursor=cursor)
    assert mcp_refused(other_room)
    every = reads.list_drawers(
        ctx_of(secret), wing="ops", room="probes", include_superseded=True, cursor=cursor
    )
    assert mcp_refused(every)
    assert mcp_refused(reads.search(ctx_of(secret), query="kestrel", cursor=cursor))


LISTS = ["/api/search?q=kestrel&", f"{ROOM}?", "/api/entities?", "/api/review/queue?"]


@pytest.mark.parametrize("path", LISTS)
def test_a_blank_cursor_is_invalid_cursor_everywhere(client, probes, path):
    assert refused(client.get(f"{path}cursor=%20"))
    assert client.get(f"{path}cursor=").status_code == 200  # none: the first page


def test_a_search_cursor_with_a_space_added_is_refused_as_a_list_s_is(client, probes):
    cursor = cursor_of(client.get("/api/search", {"q": "kestrel", "limit": 1}).json()["next"])
    assert refused(client.get(f"/api/search?q=kestrel&limit=1&cursor=%20{quote(cursor)}"))
    listed = cursor_of(client.get(ROOM, {"page_size": 1}).json()["next"])
    assert refused(client.get(f"{ROOM}?page_size=1&cursor=%20{quote(listed)}"))


def test_the_mcp_tools_read_a_blank_cursor_alike(probes, secret):
    assert mcp_refused(reads.search(ctx_of(secret), query="kestrel", cursor=" "))
    assert mcp_refused(reads.list_drawers(ctx_of(secret), wing="ops", room="probes", cursor=" "))
