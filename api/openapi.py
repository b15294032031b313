"""The API's schema and its docs: the agent key authentication in the schema (registered when
`api.urls` imports this module), and the two views, read with GET or HEAD only. The schema's
class, which adds the refusals every operation can meet, is `api.schema`."""

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse, JsonResponse
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from api.errors import body, read_only


class AgentKeyScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.AgentKeyAuthentication"
    name = "agentKey"

    def get_security_definition(self, auto_schema: AutoSchema) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An agent key: `Authorization: Bearer <key>` or `Token <key>`.",
        }


SCHEMA_FORMATS = sorted({renderer.format for renderer in SpectacularAPIView.renderer_classes})


def known_format(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """`?format=` other than the schema's own is the API's JSON 400. Left to DRF, it was a 404
    written in the schema's YAML ("error: Not found."), the one error under /api/ not in JSON."""

    @wraps(view)
    def refuse_other_formats(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        wanted = request.GET.get("format")
        if wanted is None or wanted in SCHEMA_FORMATS:
            return view(request, *args, **kwargs)
        message = f"format must be one of {', '.join(SCHEMA_FORMATS)}."
        return JsonResponse(body(message, "invalid", {"field": "format"}), status=400)

    return refuse_other_formats


def errors_in_json(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A refusal of the view's in the API's JSON: DRF renders an error with the view's first
    renderer, so an `Accept` the schema cannot meet was a 406 written in YAML, and one the docs
    cannot meet an HTML page."""

    @wraps(view)
    def answered(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = view(request, *args, **kwargs)
        data = getattr(response, "data", None)
        if response.status_code >= 400 and isinstance(data, dict) and "code" in data:
            return JsonResponse(data, status=response.status_code)
        return response

    return answered


schema_view = read_only(known_format(errors_in_json(SpectacularAPIView.as_view())))
docs_view = read_only(errors_in_json(SpectacularSwaggerView.as_view(url_name="api:schema")))
