"""The one JSON parser of the API: the edge where every string from outside is checked once.

A body nested deeper than `MAX_DEPTH` is refused as `invalid_json` (Python's decoder would
otherwise recurse until `RecursionError`), and a string anywhere in it, key or value, that holds
a NUL or a lone surrogate is refused as `invalid`, naming where it is: PostgreSQL can store
neither, and no field needs them. A body the decoder refuses is `invalid_json` in words meant
for the sender (`json_problem`), over the REST API and MCP alike.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import IO, Any

from rest_framework import exceptions
from rest_framework.parsers import JSONParser

from dedup.validation import MAX_DEPTH, UNSTORABLE_MESSAGE, document_problem

BYTE_ORDER_MARK = (
    "a byte order mark (U+FEFF) before the JSON, which JSON sent over a network must not start "
    "with (RFC 8259)."
)


def json_problem(exc: ValueError) -> str:
    """What is wrong with a text Python's JSON decoder (or the UTF-8 decoding before it) refused
    with `exc`, in the sender's terms: three of its messages speak to a Python programmer (the
    codec, how to decode a text with a byte order mark, how to raise the interpreter's limit on
    an integer's digits)."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 (the byte 0x{exc.object[exc.start]:02x} at {exc.start})."
    message = str(exc)
    if message.startswith("Unexpected UTF-8 BOM"):
        return BYTE_ORDER_MARK
    if message.startswith("Exceeds the limit"):
        return f"an integer of more than {sys.get_int_max_str_digits()} digits."
    return message


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
        # JSON sent over a network is UTF-8 (RFC 8259) whatever charset the header names: one
        # naming latin-1 had its bytes read as such, where the same body alone is refused.
        context = {**(parser_context or {}), "encoding": "utf-8"}
        try:
            document = super().parse(stream, media_type, context)
        except RecursionError:
            raise exceptions.ParseError(f"JSON nested deeper than {MAX_DEPTH} levels.") from None
        except exceptions.ParseError as exc:
            # DRF raises it while handling the decoder's error, which says what is wrong.
            if not isinstance(exc.__context__, ValueError):
                raise
            problem = json_problem(exc.__context__)
            raise exceptions.ParseError(f"JSON parse error - {problem}") from None
        check_document(document)
        return document
