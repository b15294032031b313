"""The links in the Django admin, with actions that decide through the same service as the
console: audited, refused when already decided, reversible from the audit log."""

from django.contrib import admin, messages

from dedup.admin import ReadOnlyAdmin
from dedup.errors import DomainError
from palace.models import DrawerLink, EntityLink
from review import services
from review.curators import DECIDE_PERMISSION


class LinkAdmin(ReadOnlyAdmin):
    """Read-only: a link changes only by a decision (deleting one is the "delete link" decision:
    audited, remembered, reversible)."""

    list_filter = ["status"]
    actions = ["dismiss", "delete_link", "merge"]

    def has_decide_permission(self, request) -> bool:
        return request.user.has_perm(DECIDE_PERMISSION)

    def _decide(self, request, queryset, action: str) -> None:
        decided = 0
        for link in queryset:
            try:
                services.decide(
                    item=services.ItemRef.of(link),
                    action=action,
                    actor=request.user,
                    evidence={"via": "admin"},
                )
                decided += 1
            except DomainError as error:
                self.message_user(
                    request, f"{services.ItemRef.of(link)}: {error.message}", messages.ERROR
                )
        if decided:
            self.message_user(request, f"{action.replace('_', ' ')}: {decided} item(s) decided.")

    @admin.action(description="Dismiss (the resemblance stands, no action)", permissions=["decide"])
    def dismiss(self, request, queryset):
        self._decide(request, queryset, "dismiss")

    @admin.action(
        description="Delete link (wrong: remember the pair as distinct)", permissions=["decide"]
    )
    def delete_link(self, request, queryset):
        self._decide(request, queryset, "delete_link")

    @admin.action(description="Merge into the older side", permissions=["decide"])
    def merge(self, request, queryset):
        self._decide(request, queryset, "merge")


@admin.register(DrawerLink)
class DrawerLinkAdmin(LinkAdmin):
    list_display = ["id", "newer", "older", "verdict", "similarity", "status", "created_at"]
    list_filter = ["status", "verdict"]
    list_select_related = ["newer", "older"]
    search_fields = ["newer__uuid", "older__uuid", "newer__content", "older__content"]


@admin.register(EntityLink)
class EntityLinkAdmin(LinkAdmin):
    list_display = ["id", "newer", "older", "similarity", "distance", "status", "created_at"]
    list_select_related = ["newer", "older"]
    search_fields = ["newer__name", "older__name"]
    actions = [*LinkAdmin.actions, "add_alias"]

    @admin.action(
        description="Add alias (the older entity stays canonical)", permissions=["decide"]
    )
    def add_alias(self, request, queryset):
        self._decide(request, queryset, "add_alias")
