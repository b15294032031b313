"""The one JSON parser of the API: the edge where every string from outside is checked once.

A body nested deeper than `MAX_DEPTH` is refused as `invalid_json` (Python's decoder would
otherwise recurse until `RecursionError`), and a string anywhere in it, key or value, that holds
a NUL or a lone surrogate is refused as `invalid`, naming where it is: PostgreSQL can store
neither, and no field needs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from rest_framework import exceptions
from rest_framework.parsers import JSONParser

from dedup.validation import MAX_DEPTH, UNSTORABLE_MESSAGE, document_problem


def check_document(document: Any) -> None:
    """Refuse a document nested deeper than `MAX_DEPTH`, or holding an unstorable string
    (`dedup.validation.document_problem`)."""
    problem = document_problem(document)
    if problem is None:
        return
    path, what = problem
    if what == "deep":
        raise exceptions.ParseError(f"JSON nested deeper than {MAX_DEPTH} levels.")
    raise exceptions.ValidationError({path or "body": [UNSTORABLE_MESSAGE]})


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
