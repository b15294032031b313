"""What the MCP tests share: a tool's context for a key, a tool call through the SDK's server
in-process and a refusal's body; and, over real pipes and real HTTP, the project's `manage.py`
run as a client's machine would, the first message of every session, and the Procfile's `mcp`
process on a port of its own."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio

from api.mcp_server.server import build_server
from tests.raw_http import free_port

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


def wait_for(port: int, process: subprocess.Popen, log: Path | None = None) -> None:
    """Until the process listens on `port`; if it exits first, what it wrote on stderr (its
    pipe, or `log`, where it was sent) says why."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            said = log.read_text() if log else process.stderr.read()  # type: ignore[union-attr]
            raise RuntimeError(f"the server exited: {said}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


def procfile_command(process: str) -> str:
    for line in (ROOT / "Procfile").read_text(encoding="utf-8").splitlines():
        if line.startswith(f"{process}:"):
            return line.partition(":")[2].strip()
    raise AssertionError(f"no {process} in the Procfile")


@contextlib.contextmanager
def procfile_mcp(env: dict[str, str], log: Path, **settings: str) -> Iterator[int]:
    """The MCP process as the Procfile starts it, on a free port, with `settings` in its
    environment beside `env`'s and its stderr (its log) in `log`: its port, until it is
    stopped."""
    port = free_port()
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env = {**env, "MCP_PORT": str(port), **settings, "PATH": path}
    with log.open("w") as written:
        process = subprocess.Popen(
            ["sh", "-c", f"exec {procfile_command('mcp')}"], cwd=ROOT, env=env, stderr=written
        )
    try:
        wait_for(port, process, log)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)
