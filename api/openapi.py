"""The agent key authentication in the OpenAPI schema (imported by `api.urls` to register it)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema


class AgentKeyScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.AgentKeyAuthentication"
    name = "agentKey"

    def get_security_definition(self, auto_schema: AutoSchema) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An agent key: `Authorization: Bearer <key>` or `Token <key>`.",
        }
