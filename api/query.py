"""The API's query parameters are each given once: none takes a list. A parameter given twice was
read as its last value (`?wing=beta&wing=alpha` searched alpha for a key of alpha; a proxy or
client reading the first saw beta), so a repeat is refused, the same way for every parameter:
400 `invalid`, naming it. `config.middleware` asks it of every API request; a view reading a
parameter may ask it again (the MCP server's arguments are JSON, never repeated)."""

from __future__ import annotations

from django.http import QueryDict

from dedup.errors import InvalidInput


def given_once(params: QueryDict, name: str) -> str | None:
    """The parameter's value, None when absent; refused when given more than once."""
    values = params.getlist(name)
    if len(values) > 1:
        raise InvalidInput(f"{name} must be given once.", details={"field": name, "value": values})
    return values[0] if values else None


def each_given_once(params: QueryDict) -> None:
    """Refuse the first parameter given more than once."""
    for name in params:
        given_once(params, name)
