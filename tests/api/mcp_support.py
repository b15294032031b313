"""What the MCP tests share: a tool's context for a key, a tool call through the SDK's server
in-process and a refusal's body; and, over real pipes and real HTTP, the project's `manage.py`
run as a client's machine would, and the first message of every session."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio

from api.mcp_server.server import build_server

ROOT = Path(__file__).resolve().parents[2]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def ctx_of(secret: str) -> Any:
    """What a tool reads of its MCP context: the request's headers (HTTP), holding the key."""
    return SimpleNamespace(headers={"authorization": f"Bearer {secret}"})


def call(secret: str, name: str, arguments: dict[str, Any]) -> Any:
    """A tool call as the SDK makes it: the server's own checks, then the tool's schema, then
    the tool itself, on a worker thread (which the test database, in a transaction, cannot
    serve: what such a test sees are the refusals before it)."""

    async def run() -> Any:
        return await build_server().call_tool(name, arguments, ctx_of(secret))

    return anyio.run(run)


def refusal(answer: Any) -> dict[str, Any]:
    """A refused tool's error body, sent as text and as structured content alike."""
    assert getattr(answer, "is_error", False), answer
    body = json.loads(answer.content[0].text)
    assert body == answer.structured_content
    return body


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout
