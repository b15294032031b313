"""The Django admin over the palace. Writes go through `dedup.services`, as from the API: a drawer
added here is deduplicated, a deletion is audited, and the audit log is read-only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict, cast

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.text import smart_split, unescape_string_literal

from dedup import imports, policy, services
from dedup.errors import DomainError
from dedup.forms import DrawerAddForm, RoomForm, WingForm
from palace import name_search, selectors
from palace.models import (
    Checkpoint,
    DistinctPair,
    Drawer,
    Entity,
    EntityAlias,
    Import,
    Mention,
    Room,
    Wing,
)

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldGroups
    from django_stubs_ext import WithAnnotations

    class _RoomCount(TypedDict):
        room_count: int

    class _MentionCount(TypedDict):
        mention_count: int


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class RoomInline(admin.TabularInline):
    model = Room
    form = RoomForm
    extra = 0
    fields = ["name", "created_at"]
    readonly_fields = ["created_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Room]:
        return super().get_queryset(request).select_related("wing")  # each row shows wing/room


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


@admin.register(Wing)
class WingAdmin(RefusalsAsMessages):
    """A rename (of the wing, or of a room in its inline) goes through the service that audits
    it; adding a wing or a room is a plain create, as the write path's first use is."""

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
            room.delete()
        for room, _ in formset.changed_objects:
            services.room_change(room=room, name=room.name, wing=room.wing, actor=request.user)
        for room in formset.new_objects:
            room.save()

    def get_queryset(self, request: HttpRequest) -> QuerySet[Wing]:
        return super().get_queryset(request).annotate(room_count=Count("rooms"))

    @admin.display(ordering="room_count")
    def room_count(self, wing: WithAnnotations[Wing, _RoomCount]) -> int:
        return wing.room_count


@admin.register(Room)
class RoomAdmin(RefusalsAsMessages):
    """Renaming a room or moving it to another wing goes through the service that audits it."""

    form = RoomForm
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
    ]
    actions = ["supersede_selected"]

    @admin.display(description="content")
    def preview(self, drawer: Drawer) -> str:
        return str(drawer)

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
        self._tell_outcome(request, result)

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
        services.drawer_delete(drawer=obj, actor=request.user)

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        """`drawer_delete` removes a drawer's links and mentions with it, kept in its audit row:
        they are read-only here, so no right to delete them is asked for."""
        deleted, counts, _, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, set(), protected

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Drawer]) -> None:
        for drawer in queryset:
            services.drawer_delete(drawer=drawer, actor=request.user)

    @admin.action(description="Supersede selected drawers")
    def supersede_selected(self, request: HttpRequest, queryset: QuerySet[Drawer]) -> None:
        done = 0
        for drawer in queryset.filter(valid_to__isnull=True):
            services.drawer_supersede(drawer=drawer, actor=request.user)
            done += 1
        self.message_user(request, f"Superseded {done} drawer(s).")


class AliasInline(admin.TabularInline):
    model = EntityAlias
    extra = 0
    fields = readonly_fields = ("alias", "key", "source", "created_at")

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


def _key_or_id(text: str) -> Q:
    """The entity whose key is the text's key, or whose id it is."""
    found = Q(key=policy.entity_key(text))
    entity_id = selectors.parse_uuid(text)
    return found if entity_id is None else found | Q(uuid=entity_id)


def _search_words(term: str) -> list[str]:
    """The admin's search words: split at spaces, a quoted phrase kept whole (as Django's own
    search splits them)."""
    words = []
    for bit in smart_split(term):
        if bit[0] in {'"', "'"} and bit[-1] == bit[0] and len(bit) > 1:
            bit = unescape_string_literal(bit)
        if bit.strip():
            words.append(bit)
    return words


@admin.register(Entity)
class EntityAdmin(ReadOnlyAdmin):
    list_display = ["name", "kind", "key", "mention_count", "created_at"]
    list_filter = ["kind"]
    search_fields = ["name", "key", "alias_set__alias", "uuid"]  # see get_search_results
    search_help_text = (
        "Words (or a quoted phrase), each a piece of the name or of an alias, "
        "a whole key, or an entity's whole id."
    )
    inlines = [AliasInline]

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Entity], search_term: str
    ) -> tuple[QuerySet[Entity], bool]:
        """As the admin searches (every word, or quoted phrase, found), each word as `?name=`
        finds it (the trigram indexes: `icontains` of every field across the aliases' join read
        every entity), a key equal to its key, or the entity of that id; or the whole text, a
        key or an id; never duplicates."""
        words = _search_words(search_term)
        if not words:
            return queryset, False
        every_word = Q()
        for word in words:
            every_word &= name_search.entities_named_like(word) | _key_or_id(word)
        return queryset.filter(every_word | _key_or_id(search_term.strip())), False

    def get_queryset(self, request: HttpRequest) -> QuerySet[Entity]:
        # Counted per entity shown, not by a GROUP BY of every entity (palace.selectors).
        return super().get_queryset(request).annotate(mention_count=selectors.mention_count())

    @admin.display(ordering="mention_count")
    def mention_count(self, entity: WithAnnotations[Entity, _MentionCount]) -> int:
        return entity.mention_count


@admin.register(Mention)
class MentionAdmin(ReadOnlyAdmin):
    list_display = ["entity", "drawer", "observed_name", "rule", "created_at"]
    list_select_related = ["entity", "drawer"]
    search_fields = ["entity__name"]

    @admin.display(description="observed as")
    def observed_name(self, mention: Mention) -> str | None:
        return mention.observation.get("name")

    @admin.display(description="rule")
    def rule(self, mention: Mention) -> str | None:
        return mention.observation.get("rule")


@admin.register(DistinctPair)
class DistinctPairAdmin(ReadOnlyAdmin):
    """Pairs a curator said are not the same; written and reverted by review decisions."""

    list_display = ["kind", "low", "high", "created_at"]
    list_filter = ["kind"]


@admin.register(Checkpoint)
class CheckpointAdmin(ReadOnlyAdmin):
    list_display = ["key", "created_by", "created_at"]
    list_select_related = ["created_by"]
    search_fields = ["key"]


@admin.register(Import)
class ImportAdmin(ReadOnlyAdmin):
    """Imports are run by `import_memories` or the API; here they are read, and reversed."""

    list_display = ["id", "format", "source", "status", "progress", "created_by", "created_at"]
    list_filter = ["format", "status"]
    list_select_related = ["created_by"]
    readonly_fields = ["created_drawers", "made_links", "recorded_mentions", "malformed"]
    exclude = ["upload", "drawers", "links", "mentions", "errors"]
    actions = ["reverse"]
    shown = 20  # of an import's drawers, links and malformed records (one may hold 100,000s)

    @admin.display(description="drawers created")
    def created_drawers(self, imported: Import) -> str:
        uuids = imported.drawers.order_by("id").values_list("uuid", flat=True)[: self.shown]
        return self._first([str(u) for u in uuids], imported.drawers.count())

    @admin.display(description="links made")
    def made_links(self, imported: Import) -> str:
        pairs = imported.links.order_by("id").values_list("newer__uuid", "older__uuid")
        shown = [f"{newer} -> {older}" for newer, older in pairs[: self.shown]]
        return self._first(shown, imported.links.count())

    @admin.display(description="malformed records")
    def malformed(self, imported: Import) -> str:
        errors = imported.errors or []
        shown = [f"{e.get('file')}:{e.get('line')} {e.get('error')}" for e in errors[: self.shown]]
        return self._first(shown, len(errors))

    def _first(self, shown: list[str], total: int) -> str:
        more = f" (and {total - len(shown)} more)" if total > len(shown) else ""
        return ", ".join(shown) + more if shown else "-"

    @admin.display(description="mentions recorded")
    def recorded_mentions(self, imported: Import) -> int:
        return imported.mentions.count()

    @admin.action(description="Reverse the selected imports", permissions=["reverse"])
    def reverse(self, request: HttpRequest, queryset: QuerySet[Import]) -> None:
        for imported in queryset:
            try:
                reversal = imports.import_reverse(imported=imported, actor=request.user)
            except DomainError as error:
                self.message_user(request, f"{imported}: {error}", messages.ERROR)
                continue
            self.message_user(
                request,
                f"{imported}: {len(reversal.removed)} drawers removed, "
                f"{len(reversal.kept)} kept (built on since).",
            )

    def has_reverse_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("palace.delete_drawer")
