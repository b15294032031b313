"""Works raced in real threads, each on its own connection, released together: what race tests
on PostgreSQL share. A domain error is an answer (returned); anything else would be a 500 or a
503, so it is raised."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import connections

from dedup.errors import DomainError


def race(*works: Callable[[], Any]) -> list[Any]:
    """Each work's result, or the domain error it raised."""
    barrier = threading.Barrier(len(works))

    def one(work: Callable[[], Any]) -> Any:
        try:
            barrier.wait()
            return work()
        except DomainError as error:
            return error
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=len(works)) as pool:
        return list(pool.map(one, works))


def race_codes(*works: Callable[[], Any]) -> list[str]:
    """`race`, each answer as "ok" or the domain error's code."""
    return [answer.code if isinstance(answer, DomainError) else "ok" for answer in race(*works)]
