"""`manage.py mcp_server [--transport stdio|http] [--host H] [--port P]`: Castellan's MCP server.

stdio (the default) is for an MCP client that starts the server itself (Claude Desktop, Claude
Code): the agent key comes from `CASTELLAN_API_KEY`. http serves streamable HTTP at `/mcp`, each
request signed in with `Authorization: Bearer <key>` (README "Agents over MCP"), with the rest of
the app beside it (config/asgi.py): the Procfile's `mcp` process.
"""

from __future__ import annotations

from typing import Any

import uvicorn
from django.core.management.base import CommandError, CommandParser

from api.mcp_server.protocol import JsonRefusalH11Protocol
from api.mcp_server.server import build_server
from dedup.commands import CastellanCommand


class Command(CastellanCommand):
    help = "Serve Castellan's MCP tools over stdio or streamable HTTP."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8001)

    def handle(self, *args: Any, transport: str, host: str, port: int, **options: Any) -> None:
        if not 0 < port < 65536:
            raise CommandError(f"--port {port}: a port is from 1 to 65535.")
        if transport == "stdio":
            # stdout is the protocol's channel: nothing else may be printed on it.
            build_server().run("stdio")
            return
        self.stderr.write(f"MCP over streamable HTTP on http://{host}:{port}/mcp")
        # The whole ASGI app (config/asgi.py: `/mcp`, and Django beside it, so the process's
        # health and metrics routes answer too), as `uvicorn config.asgi:application` serves
        # it, with a request uvicorn cannot parse refused in JSON too.
        uvicorn.run(
            "config.asgi:application",
            host=host,
            port=port,
            log_level="warning",
            http=JsonRefusalH11Protocol,
        )
