"""The links in the Django admin, with actions that decide through the same service as the
console: audited, refused when already decided, reversible from the audit log; and the people's
logins, whose names are held to the rule of every login's."""

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.db.models import QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from dedup.admin import ReadOnly, ReadOnlyAdmin
from dedup.errors import DomainError
from dedup.user_names import claim_user_name
from palace.models import AuditEntry, DrawerLink, EntityLink
from review import services
from review.curators import DECIDE_PERMISSION
from review.items import Action
from review.models import Proposal, SweepRun
from review.selectors import sees_deleted_content, without_deleted_content


class LinkAdmin(ReadOnlyAdmin):
    """Read-only: a link changes only by a decision (deleting one is the "delete link" decision:
    audited, remembered, reversible)."""

    list_filter = ["status"]
    actions = ["dismiss", "delete_link", "merge"]

    def has_decide_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(DECIDE_PERMISSION)

    def _decide(self, request: HttpRequest, queryset: QuerySet, action: Action) -> None:
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
    def dismiss(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._decide(request, queryset, Action.DISMISS)

    @admin.action(
        description="Delete link (wrong: remember the pair as distinct)", permissions=["decide"]
    )
    def delete_link(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._decide(request, queryset, Action.DELETE_LINK)

    @admin.action(description="Merge into the older side", permissions=["decide"])
    def merge(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._decide(request, queryset, Action.MERGE)


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
    def add_alias(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._decide(request, queryset, Action.ADD_ALIAS)


# --- sweeps: read here, run and applied from the console, the API or the commands -------------


class FirstProposals(BaseInlineFormSet):
    """A run's first `ProposalInline.shown` proposals, read once: a run may hold 100,000s."""

    def get_queryset(self) -> QuerySet[Proposal]:
        if not hasattr(self, "_first"):
            self._first = super().get_queryset()[: ProposalInline.shown]
        return self._first


class ProposalInline(ReadOnly, admin.TabularInline):
    model = Proposal
    formset = FirstProposals
    extra = 0
    fields = readonly_fields = ("tier", "score", "status", "verdict", "sampled", "texts")
    show_change_link = True
    shown = 20  # as the Import admin shows an import's drawers; the rest are linked to
    verbose_name_plural = f"proposals (the first {shown}, highest score first)"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Proposal]:
        return super().get_queryset(request).order_by("-score", "pk")


@admin.register(SweepRun)
class SweepRunAdmin(ReadOnlyAdmin):
    """Read-only: a sweep is started, applied and reversed through `review.services.sweeps`
    (console, API, commands), which audit each step."""

    list_display = ["id", "scope", "threshold", "status", "total", "compared", "created_at"]
    list_filter = ["status", "entities"]
    readonly_fields = ["every_proposal"]
    inlines = [ProposalInline]

    @admin.display(description="proposals")
    def every_proposal(self, run: SweepRun) -> SafeString:
        """The link to all the run's proposals: the page shows the first few (`ProposalInline`)."""
        url = reverse("admin:review_proposal_changelist")
        count = f"{run.proposals.count():,}"
        return format_html(
            '<a href="{}?run__id__exact={}">all {} proposals</a>', url, run.pk, count
        )

    @admin.display(description="scope")
    def scope(self, run: SweepRun) -> str:
        if run.entities:
            return "entities"
        return "/".join(p for p in (run.wing, run.room) if p) or "whole palace"


@admin.register(Proposal)
class ProposalAdmin(ReadOnlyAdmin):
    list_display = ["id", "run", "kind", "tier", "score", "status", "verdict", "sampled"]
    list_filter = ["kind", "tier", "status", "verdict"]
    list_select_related = ["run"]


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    """The audit log: read-only (no add, change or delete), here as everywhere. A deleted
    drawer's content is shown to curators and admins only, as the API shows it."""

    list_display = ["created_at", "actor_label", "action", "target_type", "target_link"]
    list_filter = ["action", "target_type"]
    search_fields = ["actor_label", "target_id", "action"]
    date_hierarchy = "created_at"

    @admin.display(description="target")
    def target_link(self, entry: AuditEntry) -> SafeString:
        return format_html("<code>{}</code>", entry.target_id)

    def has_view_permission(self, request: HttpRequest, obj: AuditEntry | None = None) -> bool:
        return request.user.is_staff

    def hidden_fields(self, request: HttpRequest) -> tuple[str, ...]:
        """A deleted drawer's content is in a row's `before`; the changelist filters by none of
        the states and evidence (`before`, `after`, `data`) for those who may not read it."""
        if sees_deleted_content(request.user):
            return ()
        return ("before", "after", "data")

    def get_object(self, request: HttpRequest, object_id: str, from_field: Any = None) -> Any:
        entry = super().get_object(request, object_id, from_field)
        if entry is None:
            return None
        return next(without_deleted_content([entry], request.user))


class NameHeldToTheRule:
    """The admin's forms of a login: a new name, or a login's new name, held to every login's
    rule (`dedup.user_names`) under its lock. The admin validates a form and saves it in one
    transaction, so the lock is held until the login is stored: two logins made or renamed at
    once under names that read alike cannot both be (the second form is refused, said on its
    field)."""

    instance: Any
    cleaned_data: dict[str, Any]

    def clean_username(self) -> Any:
        clean = getattr(super(), "clean_username", None)  # the add form's: case-blind taken
        name = clean() if clean is not None else self.cleaned_data.get("username")
        if name and name != self.instance.username:
            claim_user_name(name, user=self.instance)
        return name


class LoginCreationForm(NameHeldToTheRule, AdminUserCreationForm):
    pass


class LoginChangeForm(NameHeldToTheRule, UserChangeForm):
    pass


class LoginAdmin(UserAdmin):
    add_form = LoginCreationForm
    form = LoginChangeForm


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), LoginAdmin)
