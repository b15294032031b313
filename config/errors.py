"""Error pages that know which interface asked: under `/api/`, and at the machines' endpoints
(health and metrics: a load balancer or a scraper asks them), every error is the API's JSON
`{"error", "code"}`; elsewhere the console keeps Django's HTML pages."""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt

from api.errors import body, not_found_response, read_only, unserved_host

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
    """A machine's endpoint (`MACHINE_PATHS`), read with GET or HEAD (`api.errors.read_only`),
    with no CSRF check: a POST met it first, a 403 HTML page."""
    return csrf_exempt(read_only(view))
