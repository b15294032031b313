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
"""

from __future__ import annotations

import base64
import binascii
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


def cursor_for(values: list[Any]) -> str:
    """A page's cursor holding `values` (ids, numbers, text), sealed; `values_of` reads it."""
    return sealed(validation.cursor_of(values))


def values_of(cursor: str, count: int) -> list[Any]:
    """The `count` values a `cursor_for` cursor holds, or InvalidInput `invalid_cursor`."""
    return validation.cursor_values(unsealed(cursor), count)


def sealed(text: str) -> str:
    """`text` (ASCII, no space) padded (`PADDED_MIN`), encrypted and authenticated under the
    current SECRET_KEY, as base64url without padding."""
    size = max(PADDED_MIN, len(text) + -len(text) % PADDED_STEP)
    nonce = secrets.token_bytes(NONCE_BYTES)
    padded = text.ljust(size).encode("ascii")
    packed = nonce + _cipher(settings.SECRET_KEY).encrypt(nonce, padded, None)
    return base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def unsealed(cursor: str) -> str:
    """The text a `sealed` cursor holds, or InvalidInput `invalid_cursor` for any cursor this
    app (under SECRET_KEY or one of SECRET_KEY_FALLBACKS) did not seal, or too long to be one."""
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
            return _cipher(secret).decrypt(nonce, sealed_text, None).decode("ascii").rstrip(" ")
        except InvalidTag:
            continue
        except UnicodeError:  # sealed by this app from ASCII: never, but refused alike
            break
    raise validation.malformed_cursor()


def _cipher(secret: str | bytes) -> AESGCM:
    """AES-256-GCM under a key of `secret` for cursors alone."""
    return AESGCM(salted_hmac(SALT, b"key", secret=secret, algorithm="sha256").digest())
