"""JSON text from outside (a REST body, an MCP message, an import's line) and why it is refused,
in the sender's terms: Python's decoder speaks to a Python programmer (the codec, how to decode a
text with a byte order mark, how to raise the interpreter's limit on an integer's digits, its own
recursion limit), and MCP's answers and an import's report said so word for word."""

from __future__ import annotations

import sys

from dedup.validation import MAX_DEPTH

BYTE_ORDER_MARK = (
    "a byte order mark (U+FEFF) before the JSON, which JSON sent over a network must not start "
    "with (RFC 8259)."
)
TOO_DEEP = f"JSON nested deeper than {MAX_DEPTH} levels."


def json_problem(exc: ValueError, byte_order_mark: str = BYTE_ORDER_MARK) -> str:
    """What is wrong with a text Python's JSON decoder (or the UTF-8 decoding before it) refused
    with `exc`, in the sender's terms; `byte_order_mark` says what to do about one."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 (the byte 0x{exc.object[exc.start]:02x} at {exc.start})."
    message = str(exc)
    if message.startswith("Unexpected UTF-8 BOM"):
        return byte_order_mark
    if message.startswith("Exceeds the limit"):
        return f"an integer of more than {sys.get_int_max_str_digits()} digits."
    return message
