"""The one JSON parser of the API: the edge where every string from outside is checked once.

A body nested deeper than `MAX_DEPTH` is refused as `invalid_json` (Python's decoder would
otherwise recurse until `RecursionError`), and a string anywhere in it, key or value, that holds
a NUL or a lone surrogate is refused as `invalid`, naming where it is: PostgreSQL can store
neither, and no field needs them. A body the decoder refuses is `invalid_json` in words meant
for the sender (`dedup.json_text.json_problem`), over the REST API, MCP and imports alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from rest_framework import exceptions
from rest_framework.parsers import JSONParser

from dedup.json_text import TOO_DEEP, json_problem
from dedup.validation import UNSTORABLE_MESSAGE, document_problem


def check_document(document: Any) -> None:
    """Refuse a document nested deeper than `MAX_DEPTH`, or holding an unstorable string
    (`dedup.validation.document_problem`)."""
    problem = document_problem(document)
    if problem is None:
        return
    path, what = problem
    if what == "deep":
        raise exceptions.ParseError(TOO_DEEP)
    raise exceptions.ValidationError({path or "body": [UNSTORABLE_MESSAGE]})


class StrictJSONParser(JSONParser):
    def parse(
        self,
        stream: IO[Any],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        # JSON sent over a network is UTF-8 (RFC 8259) whatever charset the header names: one
        # naming latin-1 had its bytes read as such, where the same body alone is refused.
        context = {**(parser_context or {}), "encoding": "utf-8"}
        try:
            document = super().parse(stream, media_type, context)
        except RecursionError:
            raise exceptions.ParseError(TOO_DEEP) from None
        except exceptions.ParseError as exc:
            # DRF raises it while handling the decoder's error, which says what is wrong.
            if not isinstance(exc.__context__, ValueError):
                raise
            problem = json_problem(exc.__context__)
            raise exceptions.ParseError(f"JSON parse error - {problem}") from None
        check_document(document)
        return document
