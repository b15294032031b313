"""Serialise writers that could race on the same row.

PostgreSQL: a transaction-scoped advisory lock on a key derived from what is being written.
SQLite: nothing to do here, because the connection opens every transaction IMMEDIATE, which
takes the database's write lock before the first read.
"""

from __future__ import annotations

import hashlib

from django.db import connection


def lock_key(*parts: object) -> int:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def advisory_lock(*parts: object) -> None:
    """Block until no other transaction holds the same key; released at commit or rollback."""
    hold_lock(lock_key(*parts))


def hold_lock(key: int) -> None:
    """`advisory_lock` by a key `lock_key` already made."""
    if connection.vendor != "postgresql":
        return
    if not connection.in_atomic_block:  # pragma: no cover - a programming error
        raise RuntimeError("advisory_lock() must be called inside a transaction.")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])
