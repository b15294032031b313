"""Recall as a service (`dedup.search.drawers_search`), the function every interface calls."""

import pytest
from django.db import connection

from dedup import policy, services
from dedup.errors import InvalidInput
from dedup.search import KOREAN_PAIRS_MAX, drawers_search

pytestmark = pytest.mark.django_db


def on_postgresql() -> bool:
    return connection.vendor == "postgresql"


README = "We decided to use PostgreSQL for storage because the team knows it."


def test_the_readme_example_finds_its_drawer_despite_the_typo(dedup_settings):
    stored = services.drawer_write_in(wing="notes", room="entries", content=README).drawer
    page = drawers_search(query="team decided PostgreSLQ storage", wing="notes")
    assert page.groups == [["postgreslq", "storage"], ["decided", "team"]]
    assert [hit.drawer for hit in page.hits] == [stored]
    assert page.hits[0].matched == 1
    assert page.next_cursor is None


def test_wings_out_of_reach_are_not_searched(dedup_settings):
    services.drawer_write_in(wing="notes", room="entries", content=README)
    assert drawers_search(query="PostgreSQL storage", wings=frozenset()).hits == []
    assert drawers_search(query="PostgreSQL storage", wings={"other"}).hits == []
    assert len(drawers_search(query="PostgreSQL storage", wings={"notes"}).hits) == 1


def test_a_page_ends_where_the_next_begins(dedup_settings):
    for n in range(3):
        services.drawer_write_in(wing="notes", room="entries", content=f"{README} Take {n}.")
    first = drawers_search(query="PostgreSQL storage", limit=2)
    assert len(first.hits) == 2
    rest = drawers_search(query="PostgreSQL storage", limit=2, cursor=first.next_cursor)
    assert len(rest.hits) == 1
    assert rest.next_cursor is None
    assert {hit.drawer.pk for hit in first.hits}.isdisjoint(hit.drawer.pk for hit in rest.hits)


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"query": ""}, "invalid"),
        ({"query": None}, "invalid"),
        ({"query": "the and"}, "invalid"),
        ({"query": "猫"}, "query_too_short"),  # one character of a script without spaces
        ({"query": "storage", "limit": 0}, "invalid"),
        ({"query": "storage", "limit": True}, "invalid"),
        ({"query": "storage", "cursor": "bm90IGpzb24"}, "invalid_cursor"),
    ],
)
def test_bad_input_is_refused(dedup_settings, arguments, code):
    with pytest.raises(InvalidInput) as refused:
        drawers_search(**arguments)
    assert refused.value.code == code


@pytest.mark.parametrize(
    "query",
    ["東", "の", "서", "東 の", "ab 東", "ไ"],
    ids=["han", "hiragana", "hangul", "two alone", "with a short word", "thai"],
)
def test_a_single_character_is_refused_as_too_short(dedup_settings, query):
    """The index holds pairs of characters: one alone is found only where it starts one, so
    searching it would answer some of the drawers holding it, or read every term."""
    services.drawer_write_in(wing="notes", room="entries", content="東京の会議は東で")
    with pytest.raises(InvalidInput) as refused:
        drawers_search(query=query)
    assert refused.value.code == "query_too_short"


def test_the_refusal_says_two_characters_are_needed(dedup_settings):
    with pytest.raises(InvalidInput) as refused:
        drawers_search(query="東")
    assert "two characters or more" in refused.value.message
    assert refused.value.details == {"field": "q"}


def test_a_single_character_beside_a_word_searches_by_the_word(dedup_settings):
    stored = services.drawer_write_in(wing="notes", room="entries", content="東京 storage").drawer
    assert [hit.drawer for hit in drawers_search(query="東 storage").hits] == [stored]


def test_two_characters_find_the_drawer_holding_them(dedup_settings):
    stored = services.drawer_write_in(wing="notes", room="entries", content="東京の会議").drawer
    assert [hit.drawer for hit in drawers_search(query="東京").hits] == [stored]


MIGRATION = "我们决定把数据库迁移到新的服务器上因为旧的服务器的磁盘空间已经不够用了"
WEATHER = "明天的天气预报说会下雨所以会议改到室内举行请大家准时参加"
JAPANESE = "昨日の夜にデータベースを新しいサーバーへ移行しました"


@pytest.mark.parametrize(
    ("query", "groups"),
    [
        pytest.param("数据库", [["数据", "据库"]], id="a-word-inside-a-sentence"),
        pytest.param("磁盘", [["磁盘"]], id="a-word-of-two"),
        pytest.param("服务器的磁盘", [["服务", "务器", "器的", "的磁", "磁盘"]], id="a-phrase"),
    ],
)
def test_a_word_of_a_script_without_spaces_is_found_anywhere_in_a_sentence(
    dedup_settings, query, groups
):
    """Search finds a Chinese word in the middle of a sentence, which its pieces do not hold
    whole, by the word's pairs of neighbouring characters (the index holds every pair of a run)."""
    stored = services.drawer_write_in(wing="notes", room="entries", content=MIGRATION).drawer
    services.drawer_write_in(wing="notes", room="entries", content=WEATHER)
    page = drawers_search(query=query, wing="notes")
    assert page.groups == groups
    assert [hit.drawer for hit in page.hits] == [stored]


def test_a_japanese_word_is_found_in_a_sentence_and_beside_other_words(dedup_settings):
    japanese = services.drawer_write_in(wing="notes", room="entries", content=JAPANESE).drawer
    services.drawer_write_in(wing="notes", room="entries", content=MIGRATION)
    page = drawers_search(query="データベース postgres", wing="notes")
    assert page.groups == [["postgres"], ["デー", "ータ", "タベ", "ベー", "ース"]]
    assert [(hit.drawer, hit.matched) for hit in page.hits] == [(japanese, 1)]


def test_a_word_inside_a_long_text_is_found_where_its_run_is_indexed(dedup_settings):
    """A text of 40,000 characters: its index text is four times as long, past what PostgreSQL
    indexes of it (`fulltext.POSTGRESQL_MAX_CHARACTERS`). Each run's pairs stand beside its
    pieces, so the cut keeps a word's pairs wherever it keeps its run: the sentence in the
    middle is found on both databases (its pairs after every piece of the text would be cut),
    the one at the end on SQLite only."""
    import random

    from palace import fulltext

    rng = random.Random(19)  # ideographs at random: hardly a pair twice
    filler = ["".join(chr(rng.randrange(0x4E00, 0x9FA0)) for _ in range(20_000)) for _ in "ab"]
    text = f"{filler[0]}，{WEATHER}，{filler[1]}，{JAPANESE}"
    indexed = policy.index_text(policy.normalize_text(text))
    assert len(indexed) > fulltext.POSTGRESQL_MAX_CHARACTERS
    assert indexed.index("预报") < fulltext.POSTGRESQL_MAX_CHARACTERS
    stored = services.drawer_write_in(wing="notes", room="entries", content=text).drawer
    assert [hit.drawer for hit in drawers_search(query="天气预报", wing="notes").hits] == [stored]
    at_the_end = drawers_search(query="データベース", wing="notes").hits
    assert [hit.drawer for hit in at_the_end] == ([] if on_postgresql() else [stored])


KOREAN_MEETING = "서울에서 데이터베이스 이전 회의를 했습니다"  # a meeting in Seoul on the migration
KOREAN_WEATHER = "부산은 내일 비가 온다고 합니다"  # rain tomorrow in Busan


@pytest.mark.parametrize(
    ("query", "groups"),
    [
        pytest.param("서울", [["서울"]], id="a-word-of-two-with-a-particle"),
        pytest.param("회의", [["회의"]], id="another"),
        pytest.param(
            "서울에서", [["서울에서"], ["서울", "울에", "에서"], ["서울"]], id="as-written"
        ),
        pytest.param("서울의", [["서울의"], ["서울", "울의"], ["서울"]], id="another-particle"),
        pytest.param(
            "데이터베이스를",
            [
                ["데이터베이스를"],
                ["데이", "이터", "터베", "베이", "이스", "스를"],
                ["데이", "이터", "터베", "베이", "이스"],
            ],
            id="a-particle-where-it-has-none",
        ),
    ],
)
def test_a_korean_word_is_found_with_its_particles(dedup_settings, query, groups):
    """Korean writes a word's particles onto it ("서울에서": in Seoul): a word of two
    syllables, asked by no query before, is found inside one by its pairs; a word as written
    by its words' group too; and a word with another particle, or with one where the drawer
    has none, by its pairs without its particle (`policy.korean_stem`)."""
    meeting = services.drawer_write_in(wing="notes", room="entries", content=KOREAN_MEETING)
    services.drawer_write_in(wing="notes", room="entries", content=KOREAN_WEATHER)
    page = drawers_search(query=query, wing="notes")
    assert page.groups == groups
    assert [hit.drawer for hit in page.hits] == [meeting.drawer]


# A compound of 14 syllables (Kubernetes cluster upgrade), written with a particle.
KOREAN_COMPOUND = "쿠버네티스클러스터업그레이드"


@pytest.mark.parametrize("extra", [0, 20], ids=["fourteen-syllables", "twenty-nine"])
def test_a_long_korean_word_is_found_with_its_particles(dedup_settings, extra):
    """A Korean word over UNSPACED_PIECE_MAX syllables was asked as a word alone (a run that
    long of Chinese is a sentence), so the word with a particle on it was not found. A longer
    one is asked by its first KOREAN_PAIRS_MAX pairs."""
    word = KOREAN_COMPOUND + "데이터베이스마이그레이션테스트"[:extra]
    stored = services.drawer_write_in(wing="notes", room="entries", content=f"{word}를 했다").drawer
    services.drawer_write_in(wing="notes", room="entries", content=KOREAN_WEATHER)
    page = drawers_search(query=word, wing="notes")
    assert page.groups[1] == policy.character_pairs(word)[:KOREAN_PAIRS_MAX]
    assert [hit.drawer for hit in page.hits] == [stored]


def test_a_korean_word_too_long_to_ask_stands_for_its_pairs(dedup_settings):
    """100,000 syllables without a space (the attack trial): the word itself filled what
    PostgreSQL indexes of an index text, so none of its pairs were, and nothing of it was found
    there. A word too long to be asked is written as its pairs alone."""
    import random

    rng = random.Random(20)
    text = "".join(chr(rng.randrange(0xAC00, 0xD7A4)) for _ in range(100_000))
    stored = services.drawer_write_in(wing="notes", room="entries", content=text).drawer
    assert not stored.index_text.startswith(text[:100])
    assert [hit.drawer for hit in drawers_search(query=text[10:13], wing="notes").hits] == [stored]
