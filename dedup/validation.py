"""Input checks shared by every interface (API, admin, commands), so bad input is refused the
same way everywhere and before anything is written."""

from __future__ import annotations

import re
import unicodedata

from django.conf import settings

from dedup.errors import ContentTooLarge, EmptyLabel, InvalidInput
from palace.models import LABEL_MAX_LENGTH

KIND_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
NAME_MAX_LENGTH = 200  # a drawer's, an entity's or an alias's name, and a checkpoint's id
AGENT_MAX_LENGTH = 150


def clean_content(content: object) -> str:
    if not isinstance(content, str):
        raise InvalidInput("content must be a string.", details={"field": "content"})
    if "\x00" in content:
        raise InvalidInput("content must not contain NUL bytes.", details={"field": "content"})
    limit = settings.CASTELLAN_MAX_CONTENT_BYTES
    size = len(content.encode("utf-8", errors="surrogatepass"))
    if size > limit:
        raise ContentTooLarge(
            f"content is {size} bytes; the limit is {limit} bytes.",
            details={"field": "content", "limit": limit, "size": size},
        )
    if not content.strip():
        raise InvalidInput("content must not be blank.", details={"field": "content"})
    try:
        content.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InvalidInput(
            "content must be valid Unicode text.", details={"field": "content"}
        ) from error
    return content


def clean_label(value: object, field: str, *, max_length: int = LABEL_MAX_LENGTH) -> str:
    """A wing, room, drawer or entity name: trimmed, not blank (nor only invisible format
    characters), no control characters."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string.", details={"field": field})
    label = value.strip()
    if all(unicodedata.category(c) == "Cf" or c.isspace() for c in label):
        # Blank, or only characters that show nothing (a zero-width space, a joiner alone).
        raise EmptyLabel(f"{field} must not be blank.", details={"field": field})
    if len(label) > max_length:
        raise InvalidInput(
            f"{field} must be at most {max_length} characters.", details={"field": field}
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in label):
        raise InvalidInput(
            f"{field} must not contain control characters.", details={"field": field}
        )
    return label


def clean_optional_label(value: object, field: str, *, max_length: int) -> str:
    if value is None or value == "":
        return ""
    return clean_label(value, field, max_length=max_length)


def clean_kind(value: object, field: str = "kind", *, default: str = "") -> str:
    """A kind: a short lowercase word. Absent (None or "") is the default; given but blank is
    `empty_label`, as a blank name is; anything else that is not such a word is `invalid`."""
    if value is None or value == "":
        return default
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string.", details={"field": field})
    kind = value.strip().lower()
    if not kind:
        raise EmptyLabel(f"{field} must not be blank.", details={"field": field})
    if not KIND_PATTERN.match(kind):
        raise InvalidInput(
            f"{field} must be a short lowercase word (letters, digits, - and _).",
            details={"field": field},
        )
    return kind
