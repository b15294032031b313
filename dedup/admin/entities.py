"""Entities, their mentions and the pairs curators recorded distinct, read-only in the admin."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.utils.text import smart_split, unescape_string_literal

from dedup import policy
from dedup.admin.base import ReadOnly, ReadOnlyAdmin
from palace import name_search, selectors
from palace.models import DistinctPair, Entity, EntityAlias, Mention

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    class _MentionCount(TypedDict):
        mention_count: int


class AliasInline(ReadOnly, admin.TabularInline):
    model = EntityAlias
    extra = 0
    fields = readonly_fields = ("alias", "key", "source", "created_at")


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
