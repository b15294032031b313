"""The cursors a client is given between pages, sealed: it can read nothing of them and forge
none.

A page's position is the store's own ids (a drawer's `id`, global: the newest tells how many
drawers the whole store holds, every wing's, where a client is told a drawer's `uuid` only).
A cursor is sealed: its text (`validation.cursor_of`'s, or DRF's) is encrypted with a keystream
of HMAC-SHA512 over a random nonce and a counter (a PRF in counter mode), then authenticated
with HMAC-SHA256 over the nonce and the ciphertext (encrypt-then-MAC), each key derived from
SECRET_KEY for its purpose (`salted_hmac`). Django's `signing` would only sign: its payload is
base64 anyone reads. A cursor sealed with a key of SECRET_KEY_FALLBACKS is read too, so a
rotation does not break a client paging through a list; any other cursor, or one changed by a
single character, is the 400 `invalid_cursor` a malformed cursor always was.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import secrets
from typing import Any

from django.conf import settings
from django.utils.crypto import salted_hmac

from dedup import validation

SALT = "castellan.cursor"
NONCE_BYTES = 12
TAG_BYTES = 16  # HMAC-SHA256 cut to 128 bits, as AES-GCM's tag
STREAM_BLOCK_BYTES = 64  # one HMAC-SHA512


def cursor_for(values: list[Any]) -> str:
    """A page's cursor holding `values` (ids, numbers, text), sealed; `values_of` reads it."""
    return sealed(validation.cursor_of(values))


def values_of(cursor: str, count: int) -> list[Any]:
    """The `count` values a `cursor_for` cursor holds, or InvalidInput `invalid_cursor`."""
    return validation.cursor_values(unsealed(cursor), count)


def sealed(text: str) -> str:
    """`text` (ASCII) encrypted and authenticated under the current SECRET_KEY, as base64url
    without padding."""
    plain = text.encode("ascii")
    nonce = secrets.token_bytes(NONCE_BYTES)
    secret = settings.SECRET_KEY
    cipher = _xor(plain, _keystream(secret, nonce, len(plain)))
    packed = nonce + cipher + _tag(secret, nonce + cipher)
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
    nonce, cipher, tag = packed[:NONCE_BYTES], packed[NONCE_BYTES:-TAG_BYTES], packed[-TAG_BYTES:]
    for secret in [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]:
        if hmac.compare_digest(_tag(secret, nonce + cipher), tag):
            plain = _xor(cipher, _keystream(secret, nonce, len(cipher)))
            try:
                return plain.decode("ascii")
            except UnicodeError:  # sealed by this app from ASCII: never, but refused alike
                break
    raise validation.malformed_cursor()


def _keystream(secret: str | bytes, nonce: bytes, size: int) -> bytes:
    blocks = (
        salted_hmac(
            f"{SALT}.stream", nonce + counter.to_bytes(4, "big"), secret=secret, algorithm="sha512"
        ).digest()
        for counter in range(-(-size // STREAM_BLOCK_BYTES))
    )
    return b"".join(blocks)[:size]


def _tag(secret: str | bytes, data: bytes) -> bytes:
    return salted_hmac(f"{SALT}.tag", data, secret=secret, algorithm="sha256").digest()[:TAG_BYTES]


def _xor(data: bytes, stream: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(data, stream, strict=True))
