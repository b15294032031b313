"""The API's content negotiation: DRF's, with a `?format=` the API does not answer in (every
route answers JSON) refused as the query parameter it is, `invalid` naming `format`. DRF's own
answer was a 404 `not_found`, "Not found.", for a route that exists."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from rest_framework.negotiation import DefaultContentNegotiation

from dedup.errors import InvalidInput


class JsonOnlyNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request: Any, renderers: Any, format_suffix: Any = None) -> Any:
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except Http404:  # no renderer of that format
            formats = ", ".join(sorted({renderer.format for renderer in renderers}))
            raise InvalidInput(
                f"format must be {formats}: the API answers in JSON.", details={"field": "format"}
            ) from None
