"""Error pages that know which interface asked: under `/api/`, and at the machines' endpoints
(health and metrics: a load balancer or a scraper asks them), every error is the API's JSON
`{"error", "code"}`; elsewhere the console keeps Django's HTML pages."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt

from api.errors import body, not_found_response, unserved_host

API_PREFIX = "/api/"
MACHINE_PATHS = ("/healthz", "/readyz", "/metrics")


def is_api(request: HttpRequest) -> bool:
    """Whether the request's errors are answered in JSON: the API's, and the machines' (a Host
    outside ALLOWED_HOSTS at /healthz was Django's HTML page)."""
    return request.path.startswith(API_PREFIX) or request.path in MACHINE_PATHS


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        message = "Bad request."
        if isinstance(exception, DisallowedHost):  # the one a client can mend itself
            host = request.META.get("HTTP_HOST", request.META.get("SERVER_NAME", ""))
            message = unserved_host(host)
        return JsonResponse(body(message, "invalid"), status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return JsonResponse(body("Permission denied.", "permission_denied"), status=403)
    return defaults.permission_denied(request, exception)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return not_found_response()
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if is_api(request):
        return JsonResponse(body("Internal server error.", "server_error"), status=500)
    return defaults.server_error(request)


def read_only_machine_endpoint(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A machine's endpoint (`MACHINE_PATHS`), read with GET or HEAD: any other method is the
    API's JSON 405 with `Allow`. (Django's `require_safe` answered an empty HTML 405, and a POST
    met the CSRF check first: a 403 HTML page.)"""

    @csrf_exempt
    @wraps(view)
    def read_only(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method in ("GET", "HEAD"):
            return view(request, *args, **kwargs)
        message = f'Method "{request.method}" not allowed.'
        response = JsonResponse(body(message, "method_not_allowed"), status=405)
        response["Allow"] = "GET, HEAD"
        return response

    return read_only
