"""The MCP tools' arguments: each one's type, the description an agent reads, and the bounds the
server holds it to, said in the tool's JSON schema (tools/list) so a model can call a tool right
the first time.

The bounds are the REST API's, enforced where REST enforces them (its input serializers and the
services, with their messages and codes); the schema only says them (`json_schema_extra`), as the
OpenAPI schema says them for REST (`api.serializers.limits`). A test holds each said bound to
the check behind it. An argument is a JSON value of its schema's type: pydantic's lax mode took
"2", 2.0 and true for an integer and "yes" or 1 for a boolean (`Strict`).
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from pydantic import ConfigDict, Field, Strict
from typing_extensions import TypedDict

from api.serializers.limits import KIND_MAX_LENGTH
from dedup.search import QUERY_MAX_CHARACTERS, SEARCH_LIMIT_MAX
from dedup.services import Destination
from dedup.validation import (
    CURSOR_MAX_CHARACTERS,
    KIND_PATTERN,
    METADATA_MAX_BYTES,
    NAME_MAX_LENGTH,
)
from palace.models import LABEL_MAX_LENGTH

MAX_LIMIT = 200  # list_drawers' page, as REST's `page_size` at most
UUID = {"type": "string", "format": "uuid"}


def says(**schema: Any) -> Any:
    """What the schema says of a value (a bound, a format), enforced elsewhere (above)."""
    return Field(json_schema_extra=schema)


def label(max_length: int) -> Any:
    """A name that must be given: not blank ("" or only spaces is `empty_label`), at most
    `max_length` characters."""
    return says(minLength=1, maxLength=max_length)


# --- places --------------------------------------------------------------------------------

_WING = "A wing's name (trimmed). Your key may reach only some wings: list_wings names them."
_ROOM = "A room's name within the wing (trimmed)."
Wing = Annotated[str, Field(description=_WING)]
Room = Annotated[str, Field(description=_ROOM)]
NewWing = Annotated[
    str,
    label(LABEL_MAX_LENGTH),
    Field(
        description=_WING + " A wing (and room) is made by the first write into it; a new "
        "wing's name holds no '/' nor ',' and is not '*'."
    ),
]
NewRoom = Annotated[
    str, label(LABEL_MAX_LENGTH), Field(description=_ROOM + " A new one's holds no '/'.")
]
WingFilter = Annotated[
    str | None,
    Field(
        description="Only drawers of this wing: one your key reaches (another is "
        'wing_not_found, whether it exists or not). Omit (or ""): every wing your key reaches.'
    ),
]
RoomFilter = Annotated[
    str | None,
    Field(description='Only drawers of rooms of this name. Omit (or ""): every room.'),
]
AgentFilter = Annotated[
    str | None,
    Field(description='Only drawers written by this agent (its user name). Omit (or ""): any.'),
]

# --- what a write carries ------------------------------------------------------------------

Content = Annotated[
    str,
    says(minLength=1),
    Field(
        description="The memory's text, stored exactly as given: not blank, at most the "
        "server's limit in UTF-8 bytes (1 MiB unless configured; content_too_large beyond). "
        "One fact or decision per drawer finds and deduplicates best."
    ),
]
_KIND = Annotated[str, says(minLength=1, maxLength=KIND_MAX_LENGTH, pattern=KIND_PATTERN.pattern)]
_KIND_RULE = (
    "A short lowercase word: a to z first, then a to z, 0 to 9, '-' or '_', at most 32 "
    "(capitals are lowered; 'Person Name' is refused, 'person_name' is one)."
)
DrawerKind = Annotated[
    _KIND | None,
    Field(description="The memory's kind, e.g. note, decision, preference, fact. " + _KIND_RULE),
]
EntityKind = Annotated[
    _KIND | None,
    Field(
        description="The entity's kind, e.g. person, project, tool, place, organization "
        "(omitted: other); names resolve only within one kind. " + _KIND_RULE
    ),
]
DrawerName = Annotated[
    Annotated[str, label(NAME_MAX_LENGTH)] | None,
    Field(
        description="A name for the drawer, unique in its room: writing the same name with "
        "other content is refused (drawer_name_taken). Omit (or null) for an unnamed drawer."
    ),
]
Source = Annotated[
    dict[str, Any] | None,
    Field(
        description="Where the memory came from (a file and line, a URL, a tool call), as a "
        f"JSON object of at most {METADATA_MAX_BYTES // 1024} KiB. Omit: "
        '{"via": "mcp", "user": <your agent>} is recorded.'
    ),
]
ChosenId = Annotated[
    Annotated[str, says(**UUID)] | None,
    Field(
        description="A UUID you choose for the new drawer, so that a retry after a lost "
        "answer returns the same drawer (the same content) instead of writing it twice."
    ),
]

# --- ids -----------------------------------------------------------------------------------

DrawerId = Annotated[
    str, says(**UUID), Field(description="A drawer's id (a UUID, as answers give it).")
]
ReplacementId = Annotated[
    Annotated[str, says(**UUID)] | None,
    Field(
        description="The id of the current drawer that replaces this one (in a wing your key "
        "reaches). Omit: the drawer just ends."
    ),
]
EntityName = Annotated[
    str,
    label(NAME_MAX_LENGTH),
    Field(
        description="The entity's name as the drawer gives it (a person, project, tool...); "
        "trimmed. Another spelling of a known entity converges on it only on safe evidence."
    ),
]

# --- checkpoints ---------------------------------------------------------------------------


class CheckpointItem(TypedDict):
    """One memory of a checkpoint."""

    # Closed, as the REST API's item is: a key it does not declare is refused, not dropped.
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    content: Content
    destination: Annotated[
        str,
        says(enum=[d.value for d in Destination]),
        Field(
            description="What the memory is: general, preference, project or diary (your "
            "own notes, compared only with your own). Without `wing` it goes to room "
            "`entries` of wing general, preferences or projects, or room `diary` of wing "
            "diary; with `wing`, to that wing's room `entries`, `preferences`, `projects` "
            "or `diary`. The drawer's source records it (`destination`)."
        ),
    ]
    wing: NotRequired[
        Annotated[
            Annotated[str, label(LABEL_MAX_LENGTH)] | None,
            Field(
                description="The wing to write into; a key that reaches only some wings must "
                "name one of them. Omit: the destination's own wing."
            ),
        ]
    ]
    name: NotRequired[DrawerName]
    kind: NotRequired[DrawerKind]
    source: NotRequired[Source]


CheckpointId = Annotated[
    str,
    label(NAME_MAX_LENGTH),
    Field(
        description="An id you choose for this batch (yours alone: another agent's "
        "`session-1` is another checkpoint). Sending the same id with the same items again "
        "answers the first result; with other items it is refused (checkpoint_id_taken)."
    ),
]
CheckpointItems = Annotated[
    list[CheckpointItem],
    says(minItems=1, maxItems=1000),
    Field(
        description="1 to 1,000 memories, written in order, all or none; together at most one "
        "drawer's content limit."
    ),
]

# --- reads ---------------------------------------------------------------------------------

Query = Annotated[
    str,
    says(minLength=1, maxLength=QUERY_MAX_CHARACTERS),
    Field(
        description="The words to look for (at most 1,000 characters), not a question: a "
        "drawer is found by holding the query's words (words of three letters or digits or "
        "more, common English function words such as the, and, with left out; in Chinese, "
        "Japanese, Thai or Korean, two characters or more). A typo in one word is tolerated. "
        "A query with no such word is refused."
    ),
]
SearchSize = Annotated[
    int,
    Strict(),
    says(minimum=1, maximum=SEARCH_LIMIT_MAX),
    Field(description="How many drawers a page holds, 1 to 200."),
]
PageSize = Annotated[
    int,
    Strict(),
    says(minimum=1, maximum=MAX_LIMIT),
    Field(description="How many drawers a page holds, 1 to 200."),
]
Cursor = Annotated[
    Annotated[str, says(maxLength=CURSOR_MAX_CHARACTERS)] | None,
    Field(
        description="The previous answer's `next_cursor`, for the next page. Omit (or null, "
        'or "") for the first page.'
    ),
]
IncludeSuperseded = Annotated[
    bool,
    Strict(),
    Field(description="true: superseded drawers too (history); false: current ones only."),
]
