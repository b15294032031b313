"""The one JSON parser of the API: the edge where every string from outside is checked once.

A body nested deeper than `MAX_DEPTH` is refused as `invalid_json` (Python's decoder would
otherwise recurse until `RecursionError`), and a string anywhere in it, key or value, that holds
a NUL or a lone surrogate is refused as `invalid`, naming where it is: PostgreSQL can store
neither, and no field needs them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import IO, Any

from rest_framework import exceptions
from rest_framework.parsers import JSONParser

MAX_DEPTH = 32
# NUL, and the UTF-16 surrogate halves a JSON `\ud800` escape can smuggle into a Python str.
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
UNSTORABLE_MESSAGE = "Must not contain NUL characters or lone surrogates."


def unstorable(text: str) -> bool:
    return UNSTORABLE.search(text) is not None


def _child_path(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def check_document(document: Any) -> None:
    """Refuse a document nested deeper than `MAX_DEPTH`, or holding an unstorable string.

    Iterative, so that the check itself cannot recurse too deeply."""
    pending: list[tuple[Any, str, int]] = [(document, "", 0)]
    while pending:
        value, path, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise exceptions.ParseError(f"JSON nested deeper than {MAX_DEPTH} levels.")
        if isinstance(value, str) and unstorable(value):
            raise exceptions.ValidationError({path or "body": [UNSTORABLE_MESSAGE]})
        if isinstance(value, dict):
            for key, item in value.items():
                if unstorable(key):
                    raise exceptions.ValidationError({path or "body": [UNSTORABLE_MESSAGE]})
                pending.append((item, _child_path(path, key), depth + 1))
        elif isinstance(value, list):
            pending.extend((item, _child_path(path, i), depth + 1) for i, item in enumerate(value))


class StrictJSONParser(JSONParser):
    def parse(
        self,
        stream: IO[Any],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        try:
            document = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError(f"JSON nested deeper than {MAX_DEPTH} levels.") from None
        check_document(document)
        return document
