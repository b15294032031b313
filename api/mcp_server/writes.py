"""The MCP tools that write (and the dry run of a write): each one signs the caller in, checks
the arguments with the REST API's input serializer, holds the caller to the same right and wing
as the REST route, and calls the same service. Docstrings are the descriptions an agent reads."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from api.mcp_server import arguments as a
from api.mcp_server.calls import Route, caller_of, plain, tool, validated
from api.mcp_server.shown import shown
from api.models import DELETE, WRITE
from api.serializers import checkpoints as cs
from api.serializers import drawers as s
from api.serializers import entities as es
from api.views.checkpoints import CheckpointView
from api.views.common import drawer_or_404, replacement_or_404
from api.views.diary import DiaryView
from api.views.drawers import (
    DrawerMentionsView,
    DrawerSupersedeView,
    RoomDrawersView,
    check_data,
    mention_data,
    written_data,
)
from dedup import services
from palace import selectors

# The REST routes the tools stand for, whose throttles they share (a dry run is a POST too).
DRAWER_WRITE = Route(RoomDrawersView, "POST")
DIARY_WRITE = Route(DiaryView, "POST")
CHECKPOINT_WRITE = Route(CheckpointView, "POST")
MENTION_WRITE = Route(DrawerMentionsView, "POST")
SUPERSEDE = Route(DrawerSupersedeView, "POST")


@tool
def add_drawer(
    ctx: Context,
    wing: a.NewWing,
    room: a.NewRoom,
    content: a.Content,
    name: a.DrawerName = None,
    kind: a.DrawerKind = None,
    source: a.Source = None,
    id: a.ChosenId = None,
) -> dict[str, Any]:
    """Store a memory (a drawer) in a wing and room; use it whenever you want to remember
    something. Safe to retry: an exact copy already in the room is not stored again (the existing
    drawer comes back with created=false), and a near-duplicate is stored and linked to what it
    resembles (`similar`), never merged or dropped. Pass `id` (a UUID you choose) to make a
    retry after a lost answer return the same drawer; `name` names a drawer in its room."""
    caller = caller_of(ctx, DRAWER_WRITE)
    caller.require(WRITE, wing)
    arguments = {"content": content, "name": name, "kind": kind, "source": source, "id": id}
    data = validated(s.DrawerWriteSerializer, arguments)
    result = services.drawer_write_in(
        wing=wing,
        room=room,
        content=data["content"],
        name=data.get("name"),
        kind=data.get("kind") or "",
        agent=caller.scope.agent,
        source=data.get("source") or caller.source,
        drawer_id=data.get("id"),
    )
    return plain(shown(written_data(result)))


@tool
def check_duplicate(
    ctx: Context,
    wing: a.NewWing,
    room: a.NewRoom,
    content: a.Content,
    name: a.DrawerName = None,
    kind: a.DrawerKind = None,
    id: a.ChosenId = None,
) -> dict[str, Any]:
    """Ask, without storing anything, what add_drawer would do with this memory: whether it
    would be stored (`would_store`), the drawer it would return instead (`existing`: an exact
    copy, the same name or id), and the drawers it would be linked to as similar (`similar`:
    each drawer's id, `kind` of likeness and `similarity`, with the `signals` behind it, as
    add_drawer's `similar` says them). Use it before writing when you only want to know whether
    Castellan already holds something; it writes nothing, not even the wing or room."""
    caller = caller_of(ctx, DRAWER_WRITE)
    caller.require(WRITE, wing)
    arguments = {"content": content, "name": name, "kind": kind, "id": id}
    data = validated(s.DrawerWriteSerializer, arguments)
    check = services.drawer_check(
        wing=wing,
        room=room,
        content=data["content"],
        name=data.get("name"),
        kind=data.get("kind") or "",
        agent=caller.scope.agent,
        drawer_id=data.get("id"),
    )
    answer = check_data(check)
    if answer["existing"] is not None:
        answer["existing"] = shown(answer["existing"])
    return plain(answer)


@tool
def write_diary(
    ctx: Context,
    wing: a.NewWing,
    content: a.Content,
    kind: a.DrawerKind = None,
    source: a.Source = None,
) -> dict[str, Any]:
    """Write an entry in your own diary in a wing (its `diary` room): notes about your own work
    that are compared only with your own earlier entries, so another agent's entry is never
    taken for a copy of yours. Returns the drawer, created=false for a copy of an entry."""
    caller = caller_of(ctx, DIARY_WRITE)
    data = validated(
        s.DiaryWriteSerializer,
        {"wing": wing, "content": content, "kind": kind, "source": source},
    )
    caller.require(WRITE, data["wing"])
    result = services.drawer_write_in(
        wing=data["wing"],
        room=services.DIARY_ROOM,
        content=data["content"],
        mode=services.WriteMode.DIARY,
        kind=data.get("kind") or "",
        agent=caller.scope.agent,
        source=data.get("source") or caller.source,
    )
    return plain(shown(written_data(result)))


@tool
def write_checkpoint(ctx: Context, id: a.CheckpointId, items: a.CheckpointItems) -> dict[str, Any]:
    """Save a batch of memories at once, all or nothing, under an id you choose (say, at the end
    of a session or before your context is compacted). Each item has `content` and a
    `destination` (general, preference, project or diary) and optionally a `wing` (a key of
    some wings must name one of them): without it, an item goes to its destination's own wing
    (general, preferences, projects, diary); in a wing, to the destination's room there
    (`entries`, `preferences`, `projects`, `diary`). Each drawer of the answer says its wing,
    room and destination. Sending the same id and items again returns the first result
    (replayed=true) and stores nothing."""
    caller = caller_of(ctx, CHECKPOINT_WRITE)
    data = validated(cs.CheckpointSerializer, {"id": id, "items": items})
    for wing in cs.checkpoint_wings(data["items"]):
        caller.require(WRITE, wing)
    batch = cs.checkpoint_items(data["items"], agent_of=lambda item: caller.scope.agent)
    result, replayed = services.checkpoint_write(
        key=data["id"], items=batch, actor=caller.user, default_source=caller.source
    )
    return plain(cs.CheckpointResultSerializer({**result, "replayed": replayed}).data)


@tool
def record_mention(
    ctx: Context, drawer_id: a.DrawerId, name: a.EntityName, kind: a.EntityKind = None
) -> dict[str, Any]:
    """Record that a drawer mentions an entity (a person, project, tool, ...) by name. The name
    resolves to a known entity only on safe evidence; otherwise a new entity is made and linked
    to those it resembles for a curator to settle. Recording the same mention twice is harmless."""
    caller = caller_of(ctx, MENTION_WRITE)
    drawer = drawer_or_404(drawer_id, caller.scope)
    caller.require(WRITE, drawer.room.wing.name, stored=True)
    data = validated(es.MentionWriteSerializer, {"name": name, "kind": kind})
    result = services.mention_add(
        drawer=drawer,
        name=data["name"],
        kind=data.get("kind") or "other",
        provenance=caller.source,
        record_alias=caller.scope.wings is None,  # as the REST route: an alias steers every wing
    )
    return plain(mention_data(result, data["name"], caller.scope))


@tool
def supersede_drawer(
    ctx: Context, drawer_id: a.DrawerId, by: a.ReplacementId = None
) -> dict[str, Any]:
    """Mark a drawer as no longer true (its validity ends now), optionally naming the drawer
    that replaces it (`by`). Use it when a fact changed; the old drawer is kept, audited, as
    history. Needs the delete right."""
    caller = caller_of(ctx, SUPERSEDE)
    drawer = drawer_or_404(drawer_id, caller.scope)
    caller.require(DELETE, drawer.room.wing.name, stored=True)
    data = validated(s.SupersedeSerializer, {"by": by})  # "" or a malformed id: `by` named
    replacement = replacement_or_404(data.get("by"), caller.scope)
    services.drawer_supersede(drawer=drawer, by=replacement, actor=caller.user)
    return plain(shown(s.DrawerSerializer(selectors.drawer_by_uuid(drawer.uuid)).data))
