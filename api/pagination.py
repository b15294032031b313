"""Keyset pagination for every list: a cursor, never an offset, so pages stay stable while
writes land."""

from __future__ import annotations

from base64 import b64decode
from urllib.parse import parse_qs

from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request

from dedup.errors import InvalidInput
from dedup.validation import id_of, malformed_cursor


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
        size = id_of(raw)
        if size is None or size < 1:
            raise InvalidInput(
                f"{self.page_size_query_param} must be a whole number from 1 (more than "
                f"{self.max_page_size} gives {self.max_page_size}).",
                details={"field": self.page_size_query_param, "value": raw[:100]},
            )
        return min(size, self.max_page_size)

    def decode_cursor(self, request: Request) -> Cursor | None:
        """DRF's, with its position an id (every list is ordered by id), else 400
        `invalid_cursor` as the queue's and the search's cursors: DRF answered 404 for a cursor
        it could not decode and filtered by whatever a decoded one held, so a forged position
        (`p=2026-12-05`, base64) answered 500."""
        if request.query_params.get(self.cursor_query_param) == "":
            return None  # `cursor=` with nothing: a client's URL template with no cursor yet
        try:
            cursor = super().decode_cursor(request)
            valid = cursor is None or (
                self._as_written(request.query_params[self.cursor_query_param])
                and (cursor.position is None or id_of(str(cursor.position)) is not None)
            )
        except NotFound:  # DRF's answer to a cursor it cannot decode
            valid = False
        if not valid:
            raise malformed_cursor()
        return cursor

    def _as_written(self, encoded: str) -> bool:
        """Whether the cursor holds what DRF writes in one: some of an offset (`o`, at most the
        cutoff), a direction (`r`) and a position (`p`), and nothing else. DRF reads any base64
        text as a cursor, and one holding none of them (`"x"`) as the first page, an offset past
        its cutoff as the cutoff."""
        tokens = parse_qs(b64decode(encoded.encode("ascii")).decode("ascii"))
        offset = tokens.get("o", ["0"])[0]
        return (
            bool(tokens)
            and set(tokens) <= {"o", "r", "p"}
            and all(len(values) == 1 for values in tokens.values())
            and offset.isdigit()
            and int(offset) <= self.offset_cutoff
            and tokens.get("r", ["0"])[0] in ("0", "1")
        )


class OldestFirst(NewestFirst):
    ordering = "id"
