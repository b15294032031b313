"""Keyset pagination for every list: a cursor, never an offset, so pages stay stable while
writes land; each cursor bound to its list (`list_identity`)."""

from __future__ import annotations

import binascii
from base64 import b64decode
from typing import Any
from urllib.parse import parse_qs, urlsplit

from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from dedup.cursors import list_identity, sealed, unsealed
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

    # The query parameters that do not define a list's sequence: a page's size changes where
    # pages end, not what they cover.
    unbound_params = ("cursor", "page_size")

    def paginate_queryset(
        self, queryset: Any, request: Request, view: APIView | None = None
    ) -> list[Any] | None:
        self.bound = self.list_of(request)
        return super().paginate_queryset(queryset, request, view)

    def list_of(self, request: Request) -> bytes:
        """The list a cursor is bound to (`dedup.cursors.list_identity`): the route as
        requested (its wing, room, entity, run...; its view orders it) and every query
        parameter but the cursor and the page's size, as written (its filters: the `next` link
        carries them as they were): a cursor of another list, or of this one under other
        filters, is `invalid_cursor`, not a position there."""
        params = request.query_params
        filters = {name: params.getlist(name) for name in params if name not in self.unbound_params}
        return list_identity("list", path=request.path_info, filters=filters)

    def encode_cursor(self, cursor: Cursor) -> str:
        """DRF's link, its cursor sealed (`dedup.cursors`): a position is the store's own id,
        global (the newest drawer's tells how many the whole store holds)."""
        link = super().encode_cursor(cursor)
        (token,) = parse_qs(urlsplit(link).query)[self.cursor_query_param]
        return replace_query_param(link, self.cursor_query_param, sealed(token, bound=self.bound))

    def decode_cursor(self, request: Request) -> Cursor | None:
        """The position of a cursor `encode_cursor` sealed, an id, else 400 `invalid_cursor` as
        the queue's and the search's cursors: DRF answered 404 for a cursor it could not decode
        and filtered by whatever a decoded one held, so a forged position (`p=2026-12-05`,
        base64) answered 500. An unsealed cursor (DRF's own, or one given before cursors were
        sealed) is refused alike."""
        encoded = request.query_params.get(self.cursor_query_param)
        if not encoded:
            return None  # `cursor=` with nothing: a client's URL template with no cursor yet
        cursor = self._as_written(unsealed(encoded, bound=self.bound))
        if cursor is None or (cursor.position is not None and id_of(str(cursor.position)) is None):
            raise malformed_cursor()
        return cursor

    def _as_written(self, token: str) -> Cursor | None:
        """The cursor DRF wrote in `token`: some of an offset (`o`, at most the cutoff), a
        direction (`r`) and a position (`p`), and nothing else; None for any other text. Sealed,
        a token is the app's own: these checks hold only if the seal's key leaked."""
        try:
            tokens = parse_qs(b64decode(token.encode("ascii"), validate=True).decode("ascii"))
        except (ValueError, binascii.Error):  # not ASCII (a UnicodeError), not base64
            return None
        offset = tokens.get("o", ["0"])[0]
        written = (
            bool(tokens)
            and set(tokens) <= {"o", "r", "p"}
            and all(len(values) == 1 for values in tokens.values())
            and offset.isdigit()
            and int(offset) <= self.offset_cutoff
            and tokens.get("r", ["0"])[0] in ("0", "1")
        )
        if not written:
            return None
        position = tokens.get("p", [None])[0]
        reverse = tokens.get("r") == ["1"]
        # DRF's own decode keeps the position as the text it read (its stubs say an int).
        return Cursor(offset=int(offset), reverse=reverse, position=position)  # type: ignore[arg-type]


class OldestFirst(NewestFirst):
    ordering = "id"
