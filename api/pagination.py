"""Keyset pagination for every list: a cursor, never an offset, so pages stay stable while
writes land."""

from __future__ import annotations

from rest_framework.pagination import CursorPagination


class NewestFirst(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


class OldestFirst(NewestFirst):
    ordering = "id"
