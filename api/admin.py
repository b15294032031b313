"""Agent keys in the admin: creating one shows the key once; revoking is a checkbox (final)."""

from django.contrib import admin
from rest_framework_api_key.admin import APIKeyModelAdmin

from api.models import AgentKey


@admin.register(AgentKey)
class AgentKeyAdmin(APIKeyModelAdmin):
    list_display = (  # type: ignore[assignment]
        "prefix",
        "name",
        "user",
        "wings",
        "rights",
        "created",
        "last_used_at",
        "expiry_date",
        "_has_expired",
        "revoked",
    )
    list_filter = ("created", "revoked")  # type: ignore[assignment]
    search_fields = ("name", "prefix", "user__username")  # type: ignore[assignment]
    readonly_fields = ("last_used_at",)
