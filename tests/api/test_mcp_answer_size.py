"""An answer fits a model's context: sent once (JSON text, no structured copy), a drawer's content
cut to a snippet in every answer but get_drawer's (flagged, with the whole's length), without
the dedup's own keys; get_drawer reads one whole. Six drawers of 880 KB made a search 5 MB."""

from __future__ import annotations

import json
import random
from typing import Any

import anyio
import pytest

from api.mcp_server.server import build_server
from api.mcp_server.shown import SNIPPET_CHARACTERS
from dedup import services

# The key is read, and the tools run, on worker threads with connections of their own.
pytestmark = pytest.mark.django_db(transaction=True)

BIG = 880 * 1024


def big_text(seed: int) -> str:
    """About 880 KB of words, holding `lighthouse` (what the search asks for)."""
    words = random.Random(seed).choices(
        ["harbour", "keeper", "lantern", "granite", "tide", "beacon", "signal", "storm"], k=BIG
    )
    return ("lighthouse " + " ".join(words))[:BIG]


def call(ctx: Any, name: str, arguments: dict[str, Any]) -> Any:
    async def run() -> Any:
        return await build_server().call_tool(name, arguments, ctx)

    return anyio.run(run)


def answered(result: Any) -> tuple[dict[str, Any], int]:
    """The answer's JSON, and its size: once, as text."""
    assert not result.is_error, result.content
    assert result.structured_content is None
    (content,) = result.content
    return json.loads(content.text), len(content.text.encode())


def test_a_search_and_a_list_of_large_drawers_answer_snippets(ctx) -> None:
    for seed in range(6):
        services.drawer_write_in(wing="alpha", room="log", content=big_text(seed), agent="a")
    for name, arguments in [
        ("search", {"query": "lighthouse"}),
        ("list_drawers", {"wing": "alpha", "room": "log"}),
    ]:
        answer, size = answered(call(ctx, name, arguments))
        assert len(answer["drawers"]) == 6
        assert size < 6 * (SNIPPET_CHARACTERS + 1500)
        for drawer in answer["drawers"]:
            assert len(drawer["content"]) == SNIPPET_CHARACTERS
            assert (drawer["content_truncated"], drawer["content_length"]) == (True, BIG)
            assert not {"content_hash", "fingerprint"} & set(drawer)
    whole, size = answered(call(ctx, "get_drawer", {"drawer_id": answer["drawers"][0]["id"]}))
    assert whole["content"] == big_text(5)  # the newest
    assert (whole["content_truncated"], whole["content_length"]) == (False, BIG)
    assert size < BIG + 2000


def test_a_write_answers_once_without_echoing_a_large_content(ctx) -> None:
    arguments = {"wing": "alpha", "room": "log", "content": big_text(7)}
    answer, size = answered(call(ctx, "add_drawer", arguments))
    assert answer["created"] is True
    assert answer["content_truncated"] is True
    assert size < SNIPPET_CHARACTERS + 2000


def test_a_short_content_is_shown_whole_and_text_as_it_is(ctx) -> None:
    arguments = {"wing": "alpha", "room": "log", "content": "灯台の記録: 嵐の夜。"}
    result = call(ctx, "add_drawer", arguments)
    answer, _ = answered(result)
    assert (answer["content"], answer["content_truncated"]) == ("灯台の記録: 嵐の夜。", False)
    assert answer["content_length"] == len("灯台の記録: 嵐の夜。")
    assert "灯台" in result.content[0].text  # not escaped as \\u706f


def test_a_refusal_keeps_its_structured_body(ctx) -> None:
    result = call(ctx, "get_drawer", {"drawer_id": "00000000-0000-4000-8000-000000000000"})
    assert result.is_error
    assert result.structured_content["code"] == "drawer_not_found"
    assert json.loads(result.content[0].text) == result.structured_content
