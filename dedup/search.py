"""Recall: the current drawers a query finds, for every interface (the API's search, the MCP
server's search tool).

A query is searched the way a write looks for its near duplicates: its longest words, without
function words, split into small groups (`candidates.lexical_groups`), each group matching the
drawers that hold all its words. A typo breaks one word, so one group, and the drawer is still
found by the others, wherever the write path's candidate rules would find it. Drawers holding
the most groups come first, then the newest. No similarity rule decides what is shown: the
query's words only find and rank.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from dedup import candidates, cursors, policy, validation
from dedup.errors import InvalidInput
from palace import selectors

SEARCH_LIMIT_DEFAULT = 20
SEARCH_LIMIT_MAX = 200
QUERY_MAX_CHARACTERS = 1000
# A word of a script written without spaces is found anywhere in a sentence by its pairs of
# neighbouring characters, which the index holds (`policy.character_pairs`): each run of the
# query of two to UNSPACED_PIECE_MAX characters is a group of its pairs (a run of at most
# UNSPACED_WHOLE_MAX stands for no group of its own), the first PAIR_GROUPS of them. A longer run
# is a sentence, found by its pieces as the write path finds a variant. A Korean word is a
# group of its syllables' pairs too (found with its particles: "서울" in "서울에서"), beside the
# group of its words, and so is a Korean word without the particle it ends with
# (`policy.korean_stem`: "서울에서" also asks "서울", which "서울의" holds).
PAIR_GROUPS = 8
# A Korean word is a word however long (a compound written as one, "쿠버네티스클러스터업그레이드"),
# where a longer run of the scripts above is a sentence: it is asked by its pairs too, the first
# KOREAN_PAIRS_MAX of them (every drawer holding the word holds them; more would only narrow).
KOREAN_PAIRS_MAX = 24
# A query of one such character ("東", "の", "서") alone is refused (400 `query_too_short`), not
# answered empty: the index holds a run's pairs, the pieces of a long one and a lone character,
# so a character is found by its index only where it starts a term ("東*"), never where it ends
# one ("関東": its pair only), which no index of terms (FTS5, a GIN tsvector) looks up without
# reading every term. Indexed alone, a character as common as "の" would be a posting list of
# nearly every Japanese drawer, read whole for each search (on PostgreSQL a GIN index cannot
# stop at the newest); two characters are a pair, which the index holds.
SINGLE_CHARACTER = (
    "q holds a single character of a script written without spaces (Chinese, Japanese, "
    "Thai...) or of Korean, and no word to search by: search finds two characters or more "
    "(e.g. 東京, not 東), since its index holds pairs of neighbouring characters, not single ones."
)


@dataclass(frozen=True)
class SearchPage:
    """One page of hits, the word groups the query was searched by, and the cursor of the next
    page (None on the last)."""

    groups: list[list[str]]
    hits: list[selectors.SearchHit]
    next_cursor: str | None


def drawers_search(
    *,
    query: str,
    wings: Collection[str] | None = None,
    wing: str | None = None,
    room: str | None = None,
    agent: str | None = None,
    limit: int = SEARCH_LIMIT_DEFAULT,
    cursor: str | None = None,
) -> SearchPage:
    """Current drawers holding the query's words, best first, a page of `limit` at a time.

    `wings` is the caller's reach (None: every wing); `wing`, `room` and `agent` narrow the
    search further. `cursor` is a previous page's `next_cursor` of the same query and filters
    ("" is none). Bad input (a blank query, a
    NUL, a query with no word worth searching, a limit out of range) raises InvalidInput; a
    malformed cursor raises it with the code `invalid_cursor`.
    """
    groups = query_groups(query)
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InvalidInput("limit must be a whole number.", details={"field": "limit"})
    if not 1 <= limit <= SEARCH_LIMIT_MAX:
        raise InvalidInput(
            f"limit must be from 1 to {SEARCH_LIMIT_MAX}.", details={"field": "limit"}
        )
    wing = validation.lookup_form(wing) if wing else wing  # as the writes look names up
    room = validation.lookup_form(room) if room else room
    # A cursor is the search's of these word groups and filters (the sequence they define),
    # whichever interface asks: another query's or another list's is `invalid_cursor`.
    bound = search_identity(groups, wing=wing, room=room, agent=agent)
    after = _decode_cursor(cursor, bound) if cursor else None
    hits = selectors.drawers_matching(
        groups=groups,
        wings=wings,
        wing=wing,
        room=room,
        agent=agent,
        after=after,
        limit=limit + 1,
    )
    next_cursor = _encode_cursor(hits[limit - 1], bound) if len(hits) > limit else None
    return SearchPage(groups=groups, hits=hits[:limit], next_cursor=next_cursor)


def search_identity(
    groups: list[list[str]], *, wing: str | None, room: str | None, agent: str | None
) -> bytes:
    """The search a cursor pages (`dedup.cursors.list_identity`): its word groups (what ranks
    and finds) and its filters, a filter given "" as none (REST's `?wing=`, MCP's omitted)."""
    return cursors.list_identity(
        "search", groups=groups, wing=wing or None, room=room or None, agent=agent or None
    )


def query_groups(query: object) -> list[list[str]]:
    """The word groups a query is searched by, the write path's own (refused if there are
    none)."""
    if not isinstance(query, str):
        raise InvalidInput("q must be a string.", details={"field": "q"})
    if "\x00" in query:
        raise InvalidInput("q must not contain NUL characters.", details={"field": "q"})
    if not query.strip():
        raise InvalidInput("q must not be blank.", details={"field": "q"})
    if len(query) > QUERY_MAX_CHARACTERS:
        raise InvalidInput(
            f"q must be at most {QUERY_MAX_CHARACTERS} characters.", details={"field": "q"}
        )
    normalized = policy.normalize_text(query)
    runs = [run for run in policy.unspaced_runs(normalized) if len(run) > 1]
    short = {run for run in runs if len(run) <= policy.UNSPACED_WHOLE_MAX}
    words = [w for w in policy.query_words_of_normalized(normalized) if w not in short]
    groups = candidates.lexical_groups(words)
    korean = [run for run in policy.hangul_runs(normalized) if len(run) > 1]
    stems = [stem for run in korean if (stem := policy.korean_stem(run))]
    paired = [run for run in runs if len(run) <= policy.UNSPACED_PIECE_MAX] + korean + stems
    pairs = [policy.character_pairs(run)[:KOREAN_PAIRS_MAX] for run in dict.fromkeys(paired)]
    groups += pairs[:PAIR_GROUPS]
    if not groups and _single_characters(normalized):
        raise InvalidInput(SINGLE_CHARACTER, code="query_too_short", details={"field": "q"})
    if not groups:
        raise InvalidInput(
            "q has no word to search by: a word of three letters or digits or more (in any "
            "script), other than common English function words (the, and, with...), or two "
            "characters or more of a script written without spaces (Chinese, Japanese, Thai...) "
            "or of Korean.",
            details={"field": "q"},
        )
    return groups


def _single_characters(normalized: str) -> bool:
    """Whether the text holds a lone character of a script written without spaces or of
    Korean: one the index cannot find (`SINGLE_CHARACTER`)."""
    runs = [*policy.unspaced_runs(normalized), *policy.hangul_runs(normalized)]
    return any(len(run) == 1 for run in runs)


def _encode_cursor(hit: selectors.SearchHit, bound: bytes) -> str:
    """Sealed (`dedup.cursors`): the drawer's id is the store's, global, not the client's."""
    return cursors.cursor_for([hit.matched, hit.drawer.pk], bound=bound)


def _decode_cursor(cursor: str, bound: bytes) -> tuple[int, int]:
    matched, pk = cursors.values_of(cursor, 2, bound=bound)
    if type(matched) is not int or not 0 <= matched <= validation.ID_MAX:
        raise validation.malformed_cursor()
    return matched, validation.cursor_id(pk)
