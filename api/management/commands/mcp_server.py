"""`manage.py mcp_server [--transport stdio|http] [--host H] [--port P]`: Castellan's MCP server.

stdio (the default) is for an MCP client that starts the server itself (Claude Desktop, Claude
Code): the agent key comes from `CASTELLAN_API_KEY`. Such a client shows little of the server's
stderr, so what would fail every call (no key, a key that does not sign in, a database not
migrated or not reachable) ends the command at once with one line saying so, before the server
starts, rather than a traceback at every call. http serves streamable HTTP at `/mcp`, each
request signed in with `Authorization: Bearer <key>` (README "Agents over MCP"), with the rest of
the app beside it (config/asgi.py): the Procfile's `mcp` process.
"""

from __future__ import annotations

from typing import Any

import uvicorn
from django.core.management.base import CommandError, CommandParser
from django.db import connections
from rest_framework import exceptions

from api.mcp_server.calls import KEY_VARIABLE, credential_of, signed_in
from api.mcp_server.protocol import JsonRefusalH11Protocol
from api.mcp_server.server import build_server
from config.health import unapplied_migrations
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
            stdio_ready()
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


def stdio_ready() -> None:
    """Refuses to serve over stdio what could only fail: a database not migrated (or not
    reachable: `CastellanCommand` says so), no key, or one that does not sign in (a wrong,
    revoked or expired key). Each call signs in again, so a key revoked later stops there."""
    unapplied = unapplied_migrations()
    if unapplied:
        raise CommandError(
            f"The database is not migrated ({len(unapplied)} migrations to apply, the first "
            f"{unapplied[0]}): run `manage.py migrate` first."
        )
    if not credential_of(None):
        raise CommandError(
            f"Set {KEY_VARIABLE} to an agent key (`manage.py agent_key create AGENT --wings "
            "...`): over stdio every call signs in with it."
        )
    try:
        signed_in(None)
    except exceptions.APIException as error:
        raise CommandError(f"{KEY_VARIABLE} does not sign in: {error.detail}") from error
    finally:
        connections.close_all()  # the tools run on threads with connections of their own
