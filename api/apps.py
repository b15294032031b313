from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The HTTP API, and the agent keys it authenticates."""

    name = "api"
    default_auto_field = "django.db.models.BigAutoField"
