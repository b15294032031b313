"""The cursors a client is given between pages, sealed: it can read nothing of them and forge
none.

A page's position is the store's own ids (a drawer's `id`, global: the newest tells how many
drawers the whole store holds, every wing's, where a client is told a drawer's `uuid` only).
A cursor is sealed with AES-GCM (the `cryptography` package), under a key derived from
SECRET_KEY for this purpose alone (`salted_hmac`): encrypted and authenticated, a fresh random
nonce each. Django's `signing` would only sign: its payload is base64 anyone reads. A cursor
sealed with a key of SECRET_KEY_FALLBACKS is read too, so a rotation does not break a client
paging through a list; any other cursor, or one changed by a single character, is the 400
`invalid_cursor` a malformed cursor always was.

A cursor is bound to the list that made it (`list_identity`: its route or kind, and the query,
order and filters that define its sequence), as AES-GCM's associated data: given to another
list, or the same list under another query or order, it does not open and is `invalid_cursor`,
where a drawer list's cursor was a position in the entities' list, a queue cursor made in
similarity order a bound in "most uncertain first", and a search's cursor of one query a page
of another's. Cursors sealed before they were bound (unreleased, hours old) are not read.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.conf import settings
from django.utils.crypto import salted_hmac

from dedup import validation

SALT = "castellan.cursor"
NONCE_BYTES = 12  # AES-GCM's own size
TAG_BYTES = 16  # AES-GCM's tag, after the ciphertext
# AES-GCM keeps a text's length: each is padded (with spaces, which base64 never holds) to at
# least PADDED_MIN characters, then a multiple of PADDED_STEP, so a cursor's length does not
# tell how many digits its id has (every list's and the search's cursor fits in PADDED_MIN).
PADDED_MIN = 64
PADDED_STEP = 32


def list_identity(kind: str, **sequence: Any) -> bytes:
    """What a cursor is bound to: the list's kind (or route) and what defines its sequence
    (query, order, filters), as JSON with its keys sorted, ASCII (a lone surrogate escaped)."""
    return json.dumps([kind, sequence], sort_keys=True, default=str).encode("ascii")


def cursor_for(values: list[Any], *, bound: bytes) -> str:
    """A page's cursor holding `values` (ids, numbers, text), sealed and bound to its list
    (`list_identity`); `values_of` reads it."""
    return sealed(validation.cursor_of(values), bound=bound)


def values_of(cursor: str, count: int, *, bound: bytes) -> list[Any]:
    """The `count` values a `cursor_for` cursor of this list holds, or InvalidInput
    `invalid_cursor`."""
    return validation.cursor_values(unsealed(cursor, bound=bound), count)


def sealed(text: str, *, bound: bytes) -> str:
    """`text` (ASCII, no space) padded (`PADDED_MIN`), encrypted and authenticated with its
    list's identity (`bound`, associated data: authenticated, not carried) under the current
    SECRET_KEY, as base64url without padding."""
    size = max(PADDED_MIN, len(text) + -len(text) % PADDED_STEP)
    nonce = secrets.token_bytes(NONCE_BYTES)
    padded = text.ljust(size).encode("ascii")
    packed = nonce + _cipher(settings.SECRET_KEY).encrypt(nonce, padded, bound)
    return base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def unsealed(cursor: str, *, bound: bytes) -> str:
    """The text a `sealed` cursor of this list (`bound`) holds, or InvalidInput
    `invalid_cursor` for any cursor this app (under SECRET_KEY or one of SECRET_KEY_FALLBACKS)
    did not seal for this list, or too long to be one. "" and a blank cursor are refused alike:
    a caller reads "" as no cursor before it asks."""
    try:
        if len(cursor) > validation.CURSOR_MAX_CHARACTERS:
            raise ValueError(cursor)
        padded = cursor.encode("ascii") + b"=" * (-len(cursor) % 4)
        packed = base64.b64decode(padded, altchars=b"-_", validate=True)
    except (ValueError, binascii.Error):  # not ASCII (a UnicodeError), not base64url
        raise validation.malformed_cursor() from None
    if len(packed) <= NONCE_BYTES + TAG_BYTES:
        raise validation.malformed_cursor()
    nonce, sealed_text = packed[:NONCE_BYTES], packed[NONCE_BYTES:]
    for secret in [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]:
        try:
            return _cipher(secret).decrypt(nonce, sealed_text, bound).decode("ascii").rstrip(" ")
        except InvalidTag:
            continue
        except UnicodeError:  # sealed by this app from ASCII: never, but refused alike
            break
    raise validation.malformed_cursor()


def _cipher(secret: str | bytes) -> AESGCM:
    """AES-256-GCM under a key of `secret` for cursors alone."""
    return AESGCM(salted_hmac(SALT, b"key", secret=secret, algorithm="sha256").digest())
