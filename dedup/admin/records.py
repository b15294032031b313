"""Checkpoints and imports in the admin: read-only records; an import is reversed from here."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from dedup import imports
from dedup.admin.base import ReadOnlyAdmin
from dedup.errors import DomainError
from palace.models import Checkpoint, Import


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
    hidden = ("upload", "errors")  # an upload's records, and the errors past the first shown
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
        # The summary counts every one; the import keeps the first 100 (`MALFORMED_KEPT`).
        return self._first(shown, (imported.summary or {}).get("malformed", len(errors)))

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
