"""The words the full-text index holds of a text in a script written without spaces: no database."""

import importlib
import random

import pytest

from dedup.policy import (
    character_pairs,
    hangul_runs,
    index_text,
    indexed_text,
    korean_stem,
    normalize_text,
    query_words,
    unspaced_runs,
)
from dedup.policy.text import (
    _UNSPACED,
    QUERY_WORD_MAX_CHARS,
    UNSPACED_PIECE_MAX,
    UNSPACED_PIECE_MIN,
    UNSPACED_RANGES,
    UNSPACED_WHOLE_MAX,
    _pieces,
    may_be_unspaced,
)

# Common characters of Chinese (the Thai and Japanese cases below use their own).
HAN = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学"
SENTENCE = (
    "我们决定把数据库迁移到新的服务器上因为旧的服务器的磁盘空间已经不够用了迁移将在下周一进行"
)


@pytest.mark.parametrize(
    "text",
    [
        "The deploy script must run database migrations first.",
        "Мы перенесли базу данных на новый сервер.",
        "نقلنا قاعدة البيانات إلى الخادم الجديد",
        "हमने डेटाबेस को नए सर्वर पर ले जाया",
        "Chúng tôi đã chuyển cơ sở dữ liệu",
        "Hawai\u02bbi and q\u0303",  # a modifier letter, a combining mark Latin shares
        "",
    ],
    ids=["latin", "cyrillic", "arabic", "devanagari", "vietnamese", "shared", "empty"],
)
def test_texts_in_spaced_scripts_keep_their_own_words(text):
    normalized = normalize_text(text)
    assert index_text(normalized) is None
    assert indexed_text(normalized) == normalized


def words_and_pairs(normalized: str) -> tuple[list[str], list[str]]:
    """An index text's words as before pairs (`pairs=False`), and the pairs it adds, each once:
    those of every run of three or more."""
    words = (index_text(normalized, pairs=False) or normalized).split(" ")
    runs = [run for run in unspaced_runs(normalized) if len(run) > 2]
    pairs = list(dict.fromkeys(pair for run in runs for pair in character_pairs(run)))
    assert sorted(index_text(normalized).split(" ")) == sorted(words + pairs)
    return words, pairs


def test_a_run_is_cut_into_pieces_that_make_it_up():
    pieces, pairs = words_and_pairs(normalize_text(SENTENCE))
    assert pairs == character_pairs(SENTENCE)
    assert index_text(normalize_text(SENTENCE)).split(" ") == pieces + pairs  # after its run
    assert "".join(pieces) == SENTENCE
    assert all(UNSPACED_PIECE_MIN <= len(piece) <= UNSPACED_PIECE_MAX for piece in pieces[:-1])
    assert 1 <= len(pieces[-1]) <= UNSPACED_PIECE_MAX


def test_other_letters_and_digits_beside_a_run_are_words_of_their_own():
    normalized = normalize_text("使用PostgreSQL数据库 部署在阿里云上2024年")
    assert index_text(normalized, pairs=False) == "使用 postgresql 数据库 部署在 阿里云上 2024 年"
    # Each run's pairs right after its pieces, so a cut of the index text keeps both or neither.
    assert index_text(normalized) == (
        "使用 postgresql 数据库 数据 据库 部署在 阿里云上 部署 署在 在阿 阿里 里云 云上 2024 年"
    )


def test_a_pair_is_written_once():
    assert (
        index_text(normalize_text("数据库很大，数据库很慢"))
        == "数据库很大 数据 据库 库很 很大 数据库很慢 很慢"
    )


def test_a_short_run_stays_whole_as_a_word_would():
    """Whole, and its pairs after the words (a run of two is its own pair)."""
    assert index_text(normalize_text("东京塔 很高")) == "东京塔 东京 京塔 很高"
    assert index_text(normalize_text("很高")) is None
    assert UNSPACED_WHOLE_MAX == 6
    assert words_and_pairs(normalize_text("一二三四五六"))[0] == ["一二三四五六"]
    assert words_and_pairs(normalize_text("一二三四五六七"))[0] != ["一二三四五六七"]


def test_a_word_anywhere_in_a_run_has_its_pairs_in_the_index():
    """What search asks of a word of a script written without spaces (`character_pairs`): every
    drawer holding it anywhere in a run holds all its pairs, however the run is cut."""
    rng = random.Random(16)
    for _ in range(2000):
        run = "".join(rng.choice(HAN) for _ in range(rng.randint(3, 60)))
        at = rng.randrange(len(run) - 1)
        word = run[at : at + rng.randint(2, 12)]
        indexed = set(index_text(normalize_text(f"x {run} y")).split(" "))
        assert set(character_pairs(word)) <= indexed, (run, word)


@pytest.mark.parametrize(
    "text",
    [
        "コーヒーを飲みながら会議の資料を準備しました",  # the prolonged sound mark stays in its run
        "ไปเที่ยวเชียงใหม่กับครอบครัวเมื่อสัปดาห์ที่แล้ว",
    ],
    ids=["japanese", "thai"],
)
def test_japanese_and_thai_are_cut_too(text):
    normalized = normalize_text(text)
    words, _ = words_and_pairs(normalized)
    assert "".join(words) == normalized.replace(" ", "")
    assert len(words) > len(normalized.split(" "))


def test_query_words_are_the_pieces_in_text_order_after_other_words():
    pieces, _ = words_and_pairs(normalize_text(SENTENCE))
    assert query_words(SENTENCE) == [piece for piece in pieces if len(piece) > 2]
    assert query_words(f"{SENTENCE} postgresql 2024")[:2] == ["postgresql", "2024"]


def _edited(run: str, rng: random.Random) -> tuple[str, int]:
    """`run` with one character substituted, inserted or deleted, and where."""
    at = rng.randrange(len(run))
    kind = rng.choice("sid")
    if kind == "s":
        return run[:at] + rng.choice(HAN) + run[at + 1 :], at
    if kind == "i":
        return run[:at] + rng.choice(HAN) + run[at:], at
    return run[:at] + run[at + 1 :], at


def test_an_edit_leaves_the_pieces_before_it_as_they_were():
    """Where a piece ends depends only on the characters before: every piece of the original
    ending before the edited character is a piece of the variant, in the same place (both cut:
    a run of UNSPACED_WHOLE_MAX or fewer stays whole)."""
    rng = random.Random(14)
    for _ in range(3000):
        run = "".join(rng.choice(HAN) for _ in range(rng.randint(8, 80)))
        variant, at = _edited(run, rng)
        before = []
        for piece in _pieces(run):
            if sum(map(len, before)) + len(piece) > at - 1:
                break
            before.append(piece)
        assert _pieces(variant)[: len(before)] == before, (run, variant)


def test_an_edit_changes_few_pieces_after_it():
    """The pieces after an edit fall back into step: of 3,000 one-character edits of runs of 24
    characters or more, every variant keeps a piece of its original, and most change one or two
    (2,658 here; a forced cut at UNSPACED_PIECE_MAX moves the next ones until a chosen character
    ends a piece in both)."""
    rng = random.Random(15)
    changed, kept = [], 0
    for _ in range(3000):
        run = "".join(rng.choice(HAN) for _ in range(rng.randint(24, 80)))
        variant, _ = _edited(run, rng)
        new = set(_pieces(variant)) - set(_pieces(run))
        changed.append(len(new))
        kept += bool(set(_pieces(variant)) & set(_pieces(run)))
    assert kept == 3000
    assert sum(count <= 2 for count in changed) >= 0.85 * len(changed)
    assert sum(count <= 4 for count in changed) >= 0.98 * len(changed)


@pytest.mark.parametrize(
    "ranges",
    [
        UNSPACED_RANGES,
        importlib.import_module("dedup.migrations.0016_index_text").UNSPACED_RANGES,
    ],
    ids=["policy", "dedup 0016"],
)
def test_the_code_point_ranges_hold_every_letter_of_the_unspaced_scripts(ranges):
    """Every write's quick test (`may_be_unspaced`), `dedup_backfill` and dedup 0016 look for
    such letters by ranges of code points; the policy's runs must lie within them, or a text
    would keep the words it was indexed by before."""
    outside = [
        hex(point)
        for point in range(0x110000)
        if not 0xD800 <= point <= 0xDFFF
        and _UNSPACED.match(chr(point))
        and normalize_text(chr(point))  # a letter or digit: what a normalised text holds
        and not any(low <= point <= high for low, high in ranges)
    ]
    assert outside == []


@pytest.mark.parametrize(
    "text",
    [
        "Chúng tôi đã chuyển cơ sở dữ liệu",
        "데이터베이스를 새 서버로 옮겼습니다",
        "Ελληνικά κείμενα",
    ],
    ids=["vietnamese", "korean", "greek"],
)
def test_spaced_scripts_past_u0e00_stop_at_the_quick_test(text):
    """Every write asks; the `regex` scan of a long text costs tens of microseconds."""
    assert not may_be_unspaced(normalize_text(text))


def test_the_quick_test_passes_unspaced_text():
    assert may_be_unspaced(normalize_text(SENTENCE))


KOREAN = "데이터베이스를 새 서버로 옮겼습니다"  # we moved the database to a new server


def test_a_korean_word_keeps_its_place_and_its_pairs_follow_it():
    """Korean is written with spaces, its particles onto its words: each word of three
    syllables or more is followed by its pairs, a word of two is its own pair."""
    assert index_text(normalize_text(KOREAN)).split(" ") == [
        *("데이터베이스를", "데이", "이터", "터베", "베이", "이스", "스를"),
        *("새", "서버로", "서버", "버로", "옮겼습니다", "옮겼", "겼습", "습니", "니다"),
    ]


def test_a_korean_pair_is_written_once_and_other_words_stay_as_they_are():
    indexed = index_text(normalize_text("서울에서 서울의 API를 썼다")).split(" ")
    assert indexed == ["서울에서", "서울", "울에", "에서", "서울의", "울의", "api를", "썼다"]


def test_korean_words_pairs_are_not_query_words():
    """The write path asks words of three characters or more: never a pair."""
    assert query_words(KOREAN) == ["데이터베이스를", "옮겼습니다", "서버로"]


def test_the_rules_before_dedup_0020_held_no_korean_pairs():
    assert index_text(normalize_text(KOREAN), hangul=False) is None
    mixed = normalize_text("东京塔 서울에서")
    assert index_text(mixed, hangul=False) == "东京塔 东京 京塔 서울에서"
    assert index_text(mixed) == "东京塔 东京 京塔 서울에서 서울 울에 에서"


def test_korean_runs_are_its_syllables_only():
    """Syllables (a normalised text is NFC): not the compatibility jamo of a chat's ㅋㅋ."""
    assert hangul_runs(normalize_text("ㅋㅋ 서울에서 2024년")) == ["서울에서", "년"]
    assert hangul_runs("plain ascii") == []


def test_a_korean_word_inside_latin_letters_has_its_pairs():
    """ "S3버킷" (an S3 bucket): its two syllables are no word of their own."""
    indexed = index_text(normalize_text("S3버킷 정리")).split(" ")
    assert indexed == ["s3버킷", "버킷", "정리"]


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("서울에서", "서울"),
        ("회의를", "회의"),
        ("데이터베이스는", "데이터베이스"),
        ("서버로", "서버"),
        ("데이터베이스", None),  # no particle
        ("회의", None),  # 의 is one, but one syllable would be left
    ],
)
def test_a_korean_word_s_stem_is_the_word_without_its_particle(word, stem):
    assert korean_stem(word) == stem


def test_a_korean_word_stands_for_its_pairs_alone_only_past_the_longest_query_word():
    longest = "".join(chr(0xAC00 + n) for n in range(QUERY_WORD_MAX_CHARS))
    assert index_text(longest).split(" ")[0] == longest
    assert index_text(longest + "가").split(" ")[0] == longest[:2]
