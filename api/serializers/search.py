"""Recall: the search's query and its page of hits."""

from __future__ import annotations

from rest_framework import serializers

from api.serializers.common import QueryIntegerField
from api.serializers.drawers import DrawerSerializer, HoldingDrawersListSerializer
from api.serializers.limits import AgentField, LabelField
from dedup.search import QUERY_MAX_CHARACTERS, SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX


class SearchQuerySerializer(serializers.Serializer):
    """The query parameters (text, as every query parameter is). The rules about the query's
    words live in `dedup.search`, shared with every interface."""

    q = serializers.CharField(
        max_length=QUERY_MAX_CHARACTERS,
        trim_whitespace=False,
        help_text="The words to look for; a typo in one of them is tolerated.",
    )
    wing = LabelField(required=False)
    room = LabelField(required=False)
    agent = AgentField(required=False)
    limit = QueryIntegerField(min_value=1, max_value=SEARCH_LIMIT_MAX, default=SEARCH_LIMIT_DEFAULT)
    # As every list reads its cursor: "" is none (the first page), anything else exactly as
    # given (" " or a cursor with a space added is 400 `invalid_cursor`, not trimmed).
    cursor = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="The `next` of the previous page (of the same query and filters).",
    )


class SearchHitSerializer(serializers.Serializer):
    drawer = DrawerSerializer()
    matched = serializers.IntegerField(
        help_text="How many of the query's word groups the drawer holds (the rank)."
    )

    class Meta:
        list_serializer_class = HoldingDrawersListSerializer


class SearchPageSerializer(serializers.Serializer):
    groups = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="The word groups searched by: a drawer is found by holding every word of one.",
    )
    results = SearchHitSerializer(many=True, source="hits")
    next = serializers.CharField(allow_null=True, help_text="The next page's URL, or null.")
