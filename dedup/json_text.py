"""JSON text from outside (a REST body, an MCP message, an import's line) and why it is refused,
in the sender's terms: Python's decoder speaks to a Python programmer (the codec, how to decode a
text with a byte order mark, how to raise the interpreter's limit on an integer's digits, its own
recursion limit), and MCP's answers and an import's report said so word for word.

`loads` reads a text as the REST API reads a body: UTF-8, no NaN or Infinity, nor a number beyond
a float's range (Python reads `1e400` as infinity, which a JSON field refuses and PostgreSQL cannot
store: an import's `source` holding one failed the whole import there)."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from dedup.validation import MAX_DEPTH

BYTE_ORDER_MARK = (
    "a byte order mark (U+FEFF) before the JSON, which JSON sent over a network must not start "
    "with (RFC 8259)."
)
TOO_DEEP = f"JSON nested deeper than {MAX_DEPTH} levels."


def json_problem(exc: ValueError, byte_order_mark: str = BYTE_ORDER_MARK) -> str:
    """What is wrong with a text `loads` (or Python's JSON decoder, or the UTF-8 decoding before
    it) refused with `exc`, in the sender's terms; `byte_order_mark` says what to do about one."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 (the byte 0x{exc.object[exc.start]:02x} at {exc.start})."
    message = str(exc)
    if message.startswith("Unexpected UTF-8 BOM"):
        return byte_order_mark
    if message.startswith("Exceeds the limit"):
        return f"an integer of more than {sys.get_int_max_str_digits()} digits."
    return message


def loads(text: str | bytes) -> Any:
    """The document a JSON text holds, read strictly (see the module). A ValueError for a text
    that is none (`json_problem` says why), RecursionError for one nested past Python's limit
    (`TOO_DEEP`: far past `MAX_DEPTH`, which `validation.document_problem` holds it to)."""
    decoded = text.decode("utf-8") if isinstance(text, bytes) else text
    return json.loads(decoded, parse_constant=no_constant, parse_float=finite_float)


def no_constant(name: str) -> None:
    """NaN, Infinity and -Infinity, which Python reads and JSON has not: refused in the words of
    the REST API's parser (DRF's)."""
    raise ValueError(f"Out of range float values are not JSON compliant: {name!r}")


def finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"a number beyond a float's range ({text[:20]}).")
    return number
