"""What the palace's admins share: read-only pages, and services' refusals shown as messages."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, ClassVar

from django.contrib import admin, messages
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from dedup.errors import DomainError


class ReadOnly:
    """A page or inline that shows rows and changes none: writes go through the services."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class HiddenFieldLookups(admin.ModelAdmin):
    """A changelist applies any lookup on the model's own fields a query string names (Django
    lets them through): one into a field the pages hide from their reader would tell them, by the
    count of rows found, what it holds (`?before__content__startswith=T`, then `Th`, spells a
    deleted drawer's content). A lookup into a field `hidden_fields` names for the request is
    refused as Django refuses a lookup it does not allow: 400 (`DisallowedModelAdminLookup`)."""

    hidden: ClassVar[tuple[str, ...]] = ()

    def hidden_fields(self, request: HttpRequest) -> Collection[str]:
        """The fields whose values the pages do not show this reader."""
        return self.hidden

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest) -> bool:
        field = lookup.split(LOOKUP_SEP, 1)[0]
        if field in self.hidden_fields(request):
            return False
        return super().lookup_allowed(lookup, value, request)


class ReadOnlyAdmin(ReadOnly, HiddenFieldLookups):
    pass


class RefusalsAsMessages(admin.ModelAdmin):
    """A write the form's checks passed but a service refused (another admin stored a drawer
    of that name meanwhile, two rooms' names swapped) rolls back and the form is shown again,
    checked against what is committed now, so the refusal is an error beside its field with the
    input kept. Refused again, it is a message over an empty form; never a 500."""

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        for _ in range(2):
            try:
                return super().changeform_view(request, object_id, form_url, extra_context)
            except DomainError as error:
                refusal = error.message
        self.message_user(request, refusal, messages.ERROR)
        return HttpResponseRedirect(request.get_full_path())
