"""Agent keys in the admin: creating one shows the key once; revoking is a checkbox (final).

Rights are checkboxes and wings a comma-separated line, as `agent_key create` takes them; the
model's `clean` (`api.models.clean_scope`, `refuse_a_person`) holds them and the key's user to
the command's rules."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from rest_framework_api_key.admin import APIKeyModelAdmin
from rest_framework_api_key.models import APIKey

from api.models import RIGHTS, AgentKey, agent_users, split_names


class NamesField(forms.CharField):
    """A list of names shown and typed as "a, b". A JSON list, as this field once took, is read
    as one (and its items checked by the model), not as a wing named '["ops"]'."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return ", ".join(str(name) for name in value)
        return value

    def to_python(self, value: Any) -> list[Any]:  # type: ignore[override]
        text = super().to_python(value) or ""
        if text.startswith("["):
            try:
                return list(json.loads(text))
            except ValueError:
                pass
        return split_names(text)


class AgentKeyForm(forms.ModelForm):
    # Agents only (the model's `clean` refuses a person's login, as `agent_key create` does),
    # and no "add a user" beside it: a user made there is a person's login.
    user = forms.ModelChoiceField(
        queryset=agent_users(),
        help_text="An agent: its first key made it one (manage.py agent_key create NAME). "
        "A person's login is never an agent.",
    )
    wings = NamesField(help_text="Comma-separated wing names, or * for every wing.")
    rights = forms.MultipleChoiceField(
        choices=[(right, right) for right in RIGHTS], widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = AgentKey
        fields = ("name", "user", "wings", "rights", "expiry_date", "revoked")


# The library's own key (importing its admin registered it) authenticates no route: a key made
# there was shown once, then every request with it was 401. Agent keys are the only keys.
if admin.site.is_registered(APIKey):
    admin.site.unregister(APIKey)


@admin.register(AgentKey)
class AgentKeyAdmin(APIKeyModelAdmin):
    form = AgentKeyForm
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

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        """A key's agent is who it writes as: chosen once, when it is made."""
        fields = tuple(super().get_readonly_fields(request, obj))
        return fields if obj is None else (*fields, "user")
