"""Keyset pagination for every list: a cursor, never an offset, so pages stay stable while
writes land."""

from __future__ import annotations

from rest_framework.pagination import CursorPagination
from rest_framework.request import Request

from dedup.errors import InvalidInput


class NewestFirst(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200

    def get_page_size(self, request: Request) -> int:
        """`page_size` from 1 up (more than 200 is 200); anything else is refused, where DRF
        falls back to the default page without a word."""
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
            raise InvalidInput(
                f"{self.page_size_query_param} must be a whole number from 1.",
                details={"field": self.page_size_query_param, "value": raw},
            )
        return min(int(raw), self.max_page_size)


class OldestFirst(NewestFirst):
    ordering = "id"
