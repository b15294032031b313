"""What an agent is shown of a drawer, and how an answer is sent: sized for a model's context.

A drawer is the REST API's (`DrawerSerializer`), without what a model has no use for (its
`content_hash` and `fingerprint`, the dedup's own keys), and with at most the first
SNIPPET_CHARACTERS of its content in every answer but `get_drawer`'s: `content_truncated` says
when the content was cut and `content_length` how long the whole is, which `get_drawer` reads.
Six drawers of 880 KB made a search's answer 5 MB.

An answer is sent once, as JSON text (the SDK's `structured_output=False`): a tool's structured
content is a second copy of its text (the MCP specification asks for both when there is
structured content), every client reads the text, and a host that shows a model structured
content shows it the text when there is none. A refusal keeps its structured copy (the REST
error body, a few hundred bytes), on which a client branches by `code`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ParamSpec

from mcp.types import CallToolResult, TextContent

SNIPPET_CHARACTERS = 1000
# The dedup's own keys of a drawer: of no use to a model reading it.
LEFT_OUT = frozenset({"content_hash", "fingerprint"})
P = ParamSpec("P")


def shown(drawer: Mapping[str, Any], *, whole: bool = False) -> dict[str, Any]:
    """A serialized drawer as an agent is shown it (above); `whole`: all of its content."""
    content = drawer["content"]
    cut = not whole and len(content) > SNIPPET_CHARACTERS
    kept = {name: value for name, value in drawer.items() if name not in LEFT_OUT}
    kept["content"] = content[:SNIPPET_CHARACTERS] if cut else content
    kept["content_truncated"] = cut
    kept["content_length"] = len(content)
    return kept


def all_shown(drawers: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [shown(drawer) for drawer in drawers]


def as_text(function: Callable[P, Any]) -> Callable[P, Any]:
    """The tool, its answer sent once as JSON text (a refusal, a `CallToolResult`, as it is).
    The signature is kept, for the SDK to build the tool's schema from it."""

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> Any:
        answer = function(*args, **kwargs)
        if isinstance(answer, CallToolResult):
            return answer
        # Text as it is (a word of Chinese is 3 bytes, not an escape of 6).
        text = json.dumps(answer, ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=text)])

    return call
