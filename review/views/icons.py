"""`/favicon.ico`, which browsers ask for by that name, sent to the file WhiteNoise serves."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.templatetags.static import static
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET


@require_GET
@cache_control(max_age=86400, public=True)  # not permanent: the hashed name changes per release
def favicon(request: HttpRequest) -> HttpResponse:
    return HttpResponseRedirect(static("review/favicon.ico"))
