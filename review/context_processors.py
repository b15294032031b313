"""What every console page needs from the session: the user's preferences (no query)."""

from __future__ import annotations

from django.http import HttpRequest

from review.preferences import single_key_shortcuts


def console(request: HttpRequest) -> dict[str, bool]:
    return {"single_key_shortcuts": single_key_shortcuts(request)}
