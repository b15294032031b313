"""Wings, rooms and drawers in the admin: a drawer added here goes through the write path, a
deletion through `drawer_delete`, audited."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypedDict, cast

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.defaultfilters import pluralize
from django.utils.text import capfirst

from dedup import services
from dedup.admin.base import RefusalsAsMessages
from dedup.errors import DomainError
from dedup.forms import DrawerAddForm, RoomForm, RoomMoveForm, WingForm
from dedup.validation import place_name
from palace.models import Drawer, DrawerRestatement, Room, Wing

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldGroups
    from django_stubs_ext import WithAnnotations

    class _RoomCount(TypedDict):
        room_count: int


class RoomInline(admin.TabularInline):
    model = Room
    form = RoomForm
    extra = 0
    fields = ["name", "created_at"]
    readonly_fields = ["created_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Room]:
        return super().get_queryset(request).select_related("wing")  # each row shows wing/room


class DeletedThroughService(RefusalsAsMessages):
    """A deletion (on the object's page, or the list's action) goes through the service that
    audits it (`delete_one`): one it refuses (a row made meanwhile that the confirmation page
    did not list as protected) is said here, not a 500, and the others go."""

    def delete_one(self, request: HttpRequest, obj: Any) -> None:  # pragma: no cover
        raise NotImplementedError

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self.delete_queryset(request, [obj])

    def delete_queryset(self, request: HttpRequest, queryset: Iterable[Any]) -> None:
        for obj in queryset:
            try:
                self.delete_one(request, obj)
            except DomainError as refusal:
                name = capfirst(self.opts.verbose_name)
                self.message_user(request, f"{name} {obj}: {refusal.message}", messages.ERROR)
            else:  # the admin's history says deleted only what was
                super().log_deletions(request, cast(Any, [obj]))

    def log_deletions(self, request: HttpRequest, queryset: Any) -> Any:
        """Django logs a deletion before it asks for it: `delete_queryset` logs each one the
        service deleted instead."""
        return []

    def response_delete(self, request: HttpRequest, obj_display: str, obj_id: int) -> HttpResponse:
        if self.model._default_manager.filter(pk=obj_id).exists():  # refused: said why
            return redirect(f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist")
        return super().response_delete(request, obj_display, obj_id)


@admin.register(Wing)
class WingAdmin(DeletedThroughService):
    """A rename (of the wing, or of a room in its inline), a room's deletion and the wing's own
    go through the services that audit them; adding a wing or a room is a plain create, as the
    write path's first use is."""

    form = WingForm
    list_display = ["name", "room_count", "created_at"]
    search_fields = ["name"]
    inlines = [RoomInline]

    def save_model(
        self, request: HttpRequest, obj: Wing, form: forms.ModelForm, change: bool
    ) -> None:
        if change and "name" in form.changed_data:
            services.wing_rename(wing=obj, name=obj.name, actor=request.user)
        else:
            super().save_model(request, obj, form, change)

    def save_formset(
        self, request: HttpRequest, form: forms.ModelForm, formset: Any, change: bool
    ) -> None:
        if formset.model is not Room:  # pragma: no cover - the only inline is the rooms'
            return super().save_formset(request, form, formset, change)
        formset.save(commit=False)
        for room in formset.deleted_objects:
            services.room_delete(room=room, actor=request.user)
        for room, _ in formset.changed_objects:
            services.room_change(room=room, name=room.name, wing=room.wing, actor=request.user)
        for room in formset.new_objects:
            room.save()

    def get_queryset(self, request: HttpRequest) -> QuerySet[Wing]:
        return super().get_queryset(request).annotate(room_count=Count("rooms"))

    @admin.display(ordering="room_count")
    def room_count(self, wing: WithAnnotations[Wing, _RoomCount]) -> int:
        return wing.room_count

    def delete_one(self, request: HttpRequest, obj: Wing) -> None:
        """Through `wing_delete`: a wing a room was made or moved into meanwhile is refused (the
        confirmation page lists a wing's rooms as protected)."""
        services.wing_delete(wing=obj, actor=request.user)


@admin.register(Room)
class RoomAdmin(DeletedThroughService):
    """Renaming a room, moving it to another wing or deleting it goes through the service that
    audits it."""

    form = RoomForm
    action_form = RoomMoveForm
    actions = ["move_to_wing"]
    list_display = ["name", "wing", "created_at"]
    list_filter = ["wing"]
    search_fields = ["name", "wing__name"]
    list_select_related = ["wing"]

    def save_model(
        self, request: HttpRequest, obj: Room, form: forms.ModelForm, change: bool
    ) -> None:
        if change and form.has_changed():
            services.room_change(room=obj, name=obj.name, wing=obj.wing, actor=request.user)
        else:
            super().save_model(request, obj, form, change)

    @admin.action(description="Move the selected rooms to a wing")
    def move_to_wing(self, request: HttpRequest, queryset: QuerySet[Room]) -> None:
        """Through `rooms_move`, as one change: rooms whose drawers supersede each other's,
        refused one by one, go together."""
        try:
            named = place_name(request.POST.get("wing", ""), "wing")
        except DomainError:
            named = ""
        wing = Wing.objects.filter(name=named).first() if named else None
        if wing is None:
            self.message_user(
                request, "Name a wing that exists to move the rooms to.", messages.ERROR
            )
            return
        try:
            moved = services.rooms_move(rooms=queryset, wing=wing, actor=request.user)
        except DomainError as refusal:
            self.message_user(request, refusal.message, messages.ERROR)
            return
        self.message_user(
            request,
            f"Moved {len(moved)} room{pluralize(len(moved))} to {wing.name}.",
            messages.SUCCESS,
        )

    def delete_one(self, request: HttpRequest, obj: Room) -> None:
        """Through `room_delete`: a room a drawer was written into meanwhile is refused (the
        confirmation page lists rooms holding drawers as protected)."""
        services.room_delete(room=obj, actor=request.user)


@admin.register(Drawer)
class DrawerAdmin(RefusalsAsMessages):
    list_display = ["preview", "room", "name", "kind", "agent", "is_current", "created_at"]
    list_filter = [("valid_to", admin.EmptyFieldListFilter), "kind", "room__wing"]
    search_fields = ["content", "name", "agent", "uuid"]
    list_select_related = ["room__wing"]
    date_hierarchy = "created_at"
    add_fields = ["room", "content", "name", "kind", "agent"]
    form = DrawerAddForm  # on change every field is read-only, so its checks have nothing to do
    readonly_fields = [
        "uuid",
        "room",
        "content",
        "content_hash",
        "fingerprint",
        "name",
        "kind",
        "agent",
        "source",
        "valid_from",
        "valid_to",
        "superseded_by",
        "created_at",
        "restated_at",
    ]
    actions = ["supersede_selected"]

    @admin.display(description="content")
    def preview(self, drawer: Drawer) -> str:
        return str(drawer)

    @admin.display(description="restated since")
    def restated_at(self, drawer: Drawer) -> str:
        """When a later write first stated it again (an exact copy answered with it)."""
        restatement = DrawerRestatement.objects.filter(drawer=drawer).first()
        return f"{restatement.first_at:%Y-%m-%d %H:%M}" if restatement else "-"

    @admin.display(boolean=True, description="current")
    def is_current(self, drawer: Drawer) -> bool:
        return drawer.valid_to is None

    def get_fields(self, request: HttpRequest, obj: Drawer | None = None) -> _FieldGroups:
        # Flat lists of names: a field group list, which mypy cannot see since lists are invariant.
        return cast("_FieldGroups", self.add_fields if obj is None else self.readonly_fields)

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "room":  # each choice is shown as wing/room
            kwargs["queryset"] = Room.objects.select_related("wing")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: Drawer | None = None) -> list[str]:
        # Content is verbatim and never rewritten, so an existing drawer is read-only here.
        return [] if obj is None else self.readonly_fields

    def save_model(
        self, request: HttpRequest, obj: Drawer, form: forms.ModelForm, change: bool
    ) -> None:
        if change:  # pragma: no cover - every field is read-only on change
            return
        result = services.drawer_write(  # a refusal here is answered by `changeform_view`
            room=obj.room,
            content=obj.content,
            name=obj.name or None,
            kind=obj.kind,
            agent=obj.agent or request.user.get_username(),
            source={"via": "admin", "user": request.user.get_username()},
        )
        # Point the admin at the drawer that holds the memory (the new one, or the existing copy).
        obj.pk = result.drawer.pk
        obj.__dict__.update(
            {k: v for k, v in result.drawer.__dict__.items() if not k.startswith("_")}
        )
        obj.stored_nothing = not result.created  # type: ignore[attr-defined]
        self._tell_outcome(request, result)

    def log_addition(self, request: HttpRequest, obj: Drawer, message: Any) -> Any:
        if getattr(obj, "stored_nothing", False):  # nothing added: the copy's history stands
            return None
        return super().log_addition(request, obj, message)

    def response_add(
        self, request: HttpRequest, obj: Drawer, post_url_continue: str | None = None
    ) -> HttpResponse:
        if getattr(obj, "stored_nothing", False):  # not "added successfully": the copy, shown
            return redirect("admin:palace_drawer_change", obj.pk)
        return super().response_add(request, obj, post_url_continue)

    def _tell_outcome(self, request: HttpRequest, result: services.DrawerWrite) -> None:
        if not result.created:
            self.message_user(
                request,
                f"An exact copy is already in this room (drawer {result.drawer.uuid}); "
                "nothing new was stored.",
                messages.WARNING,
            )
        elif result.links:
            self.message_user(
                request,
                f"Stored and linked to {len(result.links)} similar drawer(s).",
                messages.INFO,
            )

    def delete_model(self, request: HttpRequest, obj: Drawer) -> None:
        self._refusals(
            request, [obj], lambda drawer: services.drawer_delete(drawer=drawer, actor=request.user)
        )

    def _refusals(
        self, request: HttpRequest, drawers: Iterable[Drawer], change: Callable[[Drawer], object]
    ) -> int:
        """Apply the change to each drawer; one another request deleted or superseded meanwhile
        is refused by the service and said here, not a 500, and the others go ahead. How many
        were changed."""
        done = 0
        for drawer in drawers:
            try:
                change(drawer)
            except DomainError as refusal:
                self.message_user(
                    request, f"Drawer {drawer.uuid}: {refusal.message}", messages.ERROR
                )
            else:
                done += 1
        return done

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        """`drawer_delete` removes a drawer's links and mentions with it, kept in its audit row:
        they are read-only here, so no right to delete them is asked for."""
        deleted, counts, _, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, set(), protected

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Drawer]) -> None:
        self._refusals(
            request,
            queryset,
            lambda drawer: services.drawer_delete(drawer=drawer, actor=request.user),
        )

    @admin.action(description="Supersede selected drawers")
    def supersede_selected(self, request: HttpRequest, queryset: QuerySet[Drawer]) -> None:
        current = list(queryset.filter(valid_to__isnull=True))
        done = self._refusals(
            request,
            current,
            lambda drawer: services.drawer_supersede(drawer=drawer, actor=request.user),
        )
        # Those refused meanwhile (deleted, superseded by another request) are said by
        # `_refusals`, not counted as superseded before the action.
        if already := queryset.count() - len(current):
            were = pluralize(already, "was,were")
            self.message_user(
                request,
                f"{already} selected drawer{pluralize(already)} {were} superseded already.",
                messages.WARNING,
            )
        if done:
            self.message_user(request, f"Superseded {done} drawer{pluralize(done)}.")
