"""Castellan as an MCP server: `server` builds it, `writes` and `reads` are its tools, `calls`
signs a caller in and shapes errors. Not named `mcp`, which is the SDK's package."""
