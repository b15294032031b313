"""The MCP tools that read: wings, rooms, drawers, a drawer's duplicates and search, each within
the caller's scope (a wing out of the key's reach is not found, as over REST)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from mcp.server.mcpserver import Context
from rest_framework import serializers

from api.errors import ApiError
from api.mcp_server import arguments as a
from api.mcp_server.calls import (
    Caller,
    Route,
    argument_names,
    caller_of,
    plain,
    tool,
    validated,
)
from api.mcp_server.shown import all_shown, shown
from api.models import READ
from api.serializers import drawers as s
from api.serializers.search import SearchQuerySerializer
from api.views.common import drawer_or_404
from api.views.drawers import DrawerDetailView, DrawerDuplicatesView, RoomDrawersView
from api.views.search import SearchView
from api.views.wings import WingDetailView, WingListView, reached_wing, reached_wings
from dedup.cursors import cursor_for, list_identity, values_of
from dedup.search import drawers_search
from dedup.validation import cursor_id, lookup_form
from palace import selectors

MAX_LIMIT = a.MAX_LIMIT
# The REST routes the tools (and resources) stand for, whose throttles they share.
WINGS_READ = Route(WingListView, "GET")
WING_READ = Route(WingDetailView, "GET")
DRAWERS_READ = Route(RoomDrawersView, "GET")
DRAWER_READ = Route(DrawerDetailView, "GET")
DUPLICATES_READ = Route(DrawerDuplicatesView, "GET")
SEARCH = Route(SearchView, "GET")


class DrawerPageSerializer(serializers.Serializer):
    """`list_drawers`' page size: from 1 to MAX_LIMIT, refused otherwise (where REST's
    `page_size` clamps a larger one to 200, this argument's schema says its maximum)."""

    limit = serializers.IntegerField(min_value=1, max_value=MAX_LIMIT)
    cursor = serializers.CharField(required=False, trim_whitespace=False)  # as REST reads one


def left_out(value: str | None) -> str | None:
    """An optional filter or cursor given as "" is left out, as REST reads an empty query
    parameter (`?cursor=`: the first page; `?wing=`: every wing)."""
    return None if value == "" else value


@tool
def list_wings(ctx: Context) -> dict[str, Any]:
    """List the wings you can reach, each with its rooms and how many current drawers each room
    holds: a wing of your key that holds nothing yet too (with no room; your first write makes
    it). `every_wing`: true if your key reaches every wing, so a write may make a new wing;
    false: write only into these. Use it first, to see where memories are kept before writing
    or searching."""
    return wings_of(caller_of(ctx, WINGS_READ))


@tool
def list_rooms(ctx: Context, wing: a.Wing) -> dict[str, Any]:
    """List one wing's rooms with their number of current drawers."""
    return rooms_of(caller_of(ctx, WING_READ), wing)


def wings_of(caller: Caller) -> dict[str, Any]:
    """The wings the caller reaches, with their rooms, its own that hold nothing yet too, and
    whether it reaches every wing (then a write may make a new one): a tool's and a resource's
    answer."""
    caller.require(READ, None)
    wings = s.WingSerializer(reached_wings(caller.scope), many=True).data
    return {"wings": plain(wings), "every_wing": caller.scope.wings is None}


def rooms_of(caller: Caller, wing: str) -> dict[str, Any]:
    """One wing's rooms, if the caller reaches it (a tool's and a resource's answer)."""
    caller.require(READ, wing)
    return plain(s.WingSerializer(reached_wing(caller.scope, wing)).data)


@tool
def list_drawers(
    ctx: Context,
    wing: a.Wing,
    room: a.Room,
    include_superseded: a.IncludeSuperseded = False,
    limit: a.PageSize = 50,
    cursor: a.Cursor = None,
) -> dict[str, Any]:
    """List a room's drawers, newest first: the current ones, or every one with
    include_superseded=true. Pass the answer's `next_cursor` back as `cursor` for the next page
    (null: there is none). Each drawer shows at most the first 1,000 characters of its content
    (`content_truncated`: get_drawer reads it whole). Use search instead to find a memory by
    what it says."""
    caller = caller_of(ctx, DRAWERS_READ)
    caller.require(READ, wing)
    data = validated(DrawerPageSerializer, {"limit": limit, "cursor": left_out(cursor)})
    found = selectors.room_by_names(wing=lookup_form(wing), room=lookup_form(room))
    if found is None:
        raise ApiError("No room with that name.", code="room_not_found", status_code=404)
    drawers = selectors.room_drawers(found, include_superseded=include_superseded)
    # Bound to this room's list, current drawers or every one: another list's is refused.
    bound = list_identity("room drawers", room=found.pk, include_superseded=include_superseded)
    if data.get("cursor"):
        (before,) = values_of(data["cursor"], 1, bound=bound)
        drawers = drawers.filter(pk__lt=cursor_id(before))
    page = list(drawers.order_by("-id")[: data["limit"] + 1])
    more = len(page) > data["limit"]
    page = page[: data["limit"]]
    return {
        "drawers": plain(all_shown(s.DrawerSerializer(page, many=True).data)),
        # Sealed: the id is global.
        "next_cursor": cursor_for([page[-1].pk], bound=bound) if more else None,
    }


@tool
def get_drawer(ctx: Context, drawer_id: a.DrawerId) -> dict[str, Any]:
    """Read one drawer whole, superseded or not: its whole content (the other tools show at
    most the first 1,000 characters of a drawer's content, `content_truncated` saying when they
    cut it), where it is, who wrote it, and whether it is current (`current`: the drawer that
    stands for it now)."""
    caller = caller_of(ctx, DRAWER_READ)
    caller.require(READ, None)
    drawer = drawer_or_404(drawer_id, caller.scope)
    return plain(shown(s.DrawerSerializer(drawer).data, whole=True))


@tool
def list_duplicates(ctx: Context, drawer_id: a.DrawerId) -> dict[str, Any]:
    """List the drawers linked to this one as similar (from both ends), closest first, with the
    verdict and scores of each link. Use it to see what Castellan found a memory resembles."""
    caller = caller_of(ctx, DUPLICATES_READ)
    caller.require(READ, None)
    drawer = drawer_or_404(drawer_id, caller.scope)
    payload = SimpleNamespace(drawer=drawer.uuid, similar=selectors.drawer_similar(drawer))
    return plain(s.DuplicatesSerializer(payload).data)


@tool
def search(
    ctx: Context,
    query: a.Query,
    wing: a.WingFilter = None,
    room: a.RoomFilter = None,
    agent: a.AgentFilter = None,
    limit: a.SearchSize = 20,
    cursor: a.Cursor = None,
) -> dict[str, Any]:
    """Find current drawers by what they say, to recall what you (or other agents) stored:
    optionally within one wing or room, or written by one agent. Returns the best matches first;
    pass the answer's `next_cursor` back as `cursor` for the next page (null: there is none).
    Each drawer shows at most the first 1,000 characters of its content (`content_truncated`:
    get_drawer reads it whole)."""
    caller = caller_of(ctx, SEARCH)
    # The REST route's own check of its query parameters (the query is its `q`), refusals
    # naming `query`.
    arguments = {
        "q": query,
        "wing": left_out(wing),
        "room": left_out(room),
        "agent": left_out(agent),
        "limit": limit,
        "cursor": left_out(cursor),
    }
    with argument_names({"q": "query"}):
        data = validated(SearchQuerySerializer, arguments)
        caller.require(READ, data.get("wing"))
        # The REST API's ranked search (`GET /api/search`), in the key's wings: the drawers
        # holding the query's word groups, most groups first, so a typo still finds its drawer.
        page = drawers_search(
            query=data["q"],
            wings=caller.scope.wings,
            wing=data.get("wing"),
            room=data.get("room"),
            agent=data.get("agent"),
            limit=data["limit"],
            cursor=data.get("cursor"),
        )
    drawers = [hit.drawer for hit in page.hits]
    return {
        "drawers": plain(all_shown(s.DrawerSerializer(drawers, many=True).data)),
        "next_cursor": page.next_cursor,
    }
