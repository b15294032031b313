"""Normalised text, fingerprints and query words: no database."""

import pytest

from dedup.policy import content_hash, fingerprint, normalize_text, query_words
from tests.conformance.loader import expectations, holds, known, params, text_of


@pytest.mark.parametrize("case", params("normalize_text"))
def test_normalize_text_conformance(case):
    normalized = normalize_text(text_of(case["input"]))
    expect = expectations(case, {"output", "length"})
    if "output" in expect:
        assert normalized == expect["output"]
    if "length" in expect:
        assert holds(len(normalized), expect["length"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("Hello,   World!", "hello world", id="punctuation-and-spaces-collapse"),
        pytest.param("  --trim--  ", "trim", id="trimmed"),
        pytest.param("café", "café", id="accents-kept"),
        pytest.param("cafe\u0301", "café", id="nfc-before-comparing"),
        pytest.param("Straße", "strasse", id="casefold-not-lower"),
        pytest.param("C++ & C#", "c c", id="symbols-separate"),
        pytest.param("port 8080", "port 8080", id="digits-kept"),
        pytest.param("٣ apples", "٣ apples", id="non-ascii-digits-are-numbers"),
        pytest.param("½ cup", "½ cup", id="number-other-category-kept"),
        pytest.param("ＡＷＳのＳ３バケット", "awsのs3バケット", id="full-width-usual-width"),
        pytest.param("ﾊﾞｹｯﾄ ｶﾞ", "バケット ガ", id="half-width-kana-joined-marks"),
        pytest.param("カﾞ", "ガ", id="half-width-mark-joins-a-full-width-kana"),
        pytest.param("東京\u3000大阪", "東京 大阪", id="ideographic-space-separates"),
        pytest.param("ﾡﾤ", "ㄱㄴ", id="half-width-hangul-usual-width"),
        pytest.param("x² ①", "x² ①", id="other-compatibility-forms-kept"),
        # U+093F (a vowel sign, category Mc) has the Alphabetic property though str.isalnum()
        # says False; U+094D (virama) has neither, but is a mark on its letter.
        pytest.param("कि", "कि", id="alphabetic-property-not-isalnum"),
        pytest.param("क्षत्रिय राजा", "क्षत्रिय राजा", id="virama-in-its-word"),
        pytest.param("ป่า", "ป่า", id="thai-tone-mark-kept"),
        pytest.param("done \u2705\ufe0f ok", "done ok", id="variation-selector-goes-with-emoji"),
        pytest.param("\u0301\u0302 abc", "abc", id="marks-on-nothing-dropped"),
        pytest.param("...", "", id="nothing-left"),
    ],
)
def test_normalize_text_rules(text, expected):
    assert normalize_text(text) == expected


def test_alphabetic_property_differs_from_isalnum():
    assert not "\u093f".isalnum()
    assert normalize_text("\u0915\u093f") == "\u0915\u093f"


@pytest.mark.parametrize("case", params("fingerprint_equal"))
def test_fingerprint_conformance(case):
    given = case["input"]
    expect = expectations(case, {"fingerprint"} if "text" in given else {"equal"})
    if "text" in given:
        assert (fingerprint(given["text"]) or "") == expect["fingerprint"]
    else:
        assert (fingerprint(given["a"]) == fingerprint(given["b"])) is expect["equal"]


def test_fingerprint_is_sha256_of_normalised_text():
    import hashlib

    assert fingerprint("Hello, World") == hashlib.sha256(b"hello world").hexdigest()


def test_content_hash_is_sha256_of_utf8_bytes():
    import hashlib

    assert content_hash("café") == hashlib.sha256("café".encode()).hexdigest()
    assert content_hash("a") != content_hash("a ")


def test_query_words_are_distinct_longest_first_and_capped():
    words = query_words("The cat and the Cat sat on a mat, magnificently")
    assert words[0] == "magnificently"
    assert words.count("cat") == 1
    assert "on" not in words
    assert "a" not in words
    # Ties keep text order.
    assert words == ["magnificently", "the", "cat", "and", "sat", "mat"]
    assert len(query_words(" ".join(f"word{n}" for n in range(200)))) == 48


def test_query_words_conformance():
    from tests.conformance.loader import cases

    (scenario,) = [s for s in cases()["scenario"] if s["id"] == "st-query-words"]
    first, second = scenario["input"]["steps"]
    first_expect = known(first["expect"], {"index_0", "occurrences", "excludes"}, "step 0")
    second_expect = known(second["expect"], {"length"}, "step 1")
    words = query_words(first["lexical_query_words"]["text"])
    assert words[0] == first_expect["index_0"]
    for word, count in first_expect["occurrences"].items():
        assert words.count(word) == count
    assert not set(first_expect["excludes"]) & set(words)
    assert len(query_words(text_of(second["lexical_query_words"]))) == second_expect["length"]


def test_marks_tell_words_apart():
    """A Thai tone mark or a Devanagari nukta makes another word: never the same normalised text
    (a "normalized" link says the words are the same)."""
    assert normalize_text("ไปเยี่ยมป่า") != normalize_text("ไปเยี่ยมป้า")  # forest / aunt
    assert normalize_text("फ़ैसला") != normalize_text("फैसला")  # with and without a nukta


def test_the_quick_rules_split_as_the_general_one():
    """`normalize_text` splits a text with no character that is or makes a mark (ASCII above
    all) by a simpler rule, for every write's sake: the same words as the general rule, over
    random texts of letters, digits, marks, symbols and the two that casefold to a mark."""
    import random

    from dedup.policy import text as rules

    def general(text: str) -> str:
        folded = rules.fold(text)
        return rules.without_leading_marks(rules._NOT_WORD.sub(" ", folded).strip())

    points = [*range(32, 0x250), *range(0x300, 0x370), *range(0x0E00, 0x0E60)]
    points += [*range(0x900, 0x980), 0x130, 0x1F0, 0xFE0F, 0x2705, 0x4E00, 0x3042, 0x3000]
    points += [*range(0xFF00, 0xFFF0)]
    rng = random.Random(17)
    for _ in range(20_000):
        text = "".join(chr(rng.choice(points)) for _ in range(rng.randint(0, 20)))
        assert normalize_text(text) == general(text), repr(text)
    for _ in range(2_000):  # ASCII alone: the quickest rule
        text = "".join(chr(rng.randint(32, 126)) for _ in range(rng.randint(0, 40)))
        assert normalize_text(text) == general(text), repr(text)


def test_every_character_of_another_width_is_folded_and_nothing_else():
    """`fold` maps each character whose decomposition is <wide> or <narrow> to the one it names,
    and only those: every one of them lies where its quick test looks (the ideographic space and
    the Halfwidth and Fullwidth Forms), and no other compatibility form is touched."""
    import sys
    import unicodedata

    from dedup.policy.text import _OTHER_WIDTH, fold

    for code in range(sys.maxunicode + 1):
        character = chr(code)
        decomposition = unicodedata.decomposition(character)
        if decomposition.startswith(("<wide>", "<narrow>")):
            assert _OTHER_WIDTH.match(character), hex(code)
            usual = chr(int(decomposition.split()[1], 16))
            assert fold(character) == unicodedata.normalize("NFC", usual).casefold(), hex(code)
        elif decomposition.startswith("<"):
            assert fold(character) == unicodedata.normalize("NFC", character).casefold(), hex(code)


def test_hidden_characters_name_what_does_not_show_and_not_what_is_drawn():
    from dedup.invisible import hidden_characters

    assert hidden_characters("a\u202eb\u200bc\u202ed") == [
        "U+202E RIGHT-TO-LEFT OVERRIDE",
        "U+200B ZERO WIDTH SPACE",
    ]
    assert hidden_characters("family \U0001f468\u200d\U0001f469 \u0600") == []
    assert len(hidden_characters("".join(chr(0x2060 + i) for i in range(5)) + "\u200b")) == 5


def test_a_regions_flag_is_drawn_not_hidden():
    from dedup.invisible import hidden_characters

    england = "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"
    assert hidden_characters(f"Go {england}!") == []
