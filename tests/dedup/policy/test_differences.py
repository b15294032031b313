"""What a curator is warned of before two texts are merged (`merge_gates.text_differences`),
and so what a cluster's page leaves open and a bulk merge skips: numbers, dates, names and any
other word but a typo. No database."""

import pytest

from dedup.policy.merge_gates import name_differences, text_differences
from dedup.policy.word_flags import WordFlag, changed_words, is_typo

WARNED = [
    # A capitalised word starting a sentence may be a name: the demo's reading notes.
    (
        "a name starting the sentence",
        "Grace recommended The Pragmatic Programmer for planning.",
        "Ada recommended The Pragmatic Programmer for planning.",
        ["a word"],
    ),
    ("a word rewritten", "Ada prefers dark mode.", "Ada prefers light mode.", ["a word"]),
    (
        "a word rewritten, one text in capitals",
        "ADA PREFERS DARK MODE IN EVERY EDITOR.",
        "Ada prefers light mode in every editor.",
        ["a word"],
    ),
    ("a verb", "The cache is owned by ops.", "The cache is monitored by ops.", ["a word"]),
    ("a word added", "Backups run at noon.", "Backups run nightly at noon.", ["a word"]),
    ("a short word one letter apart", "Take it from here.", "Take it form here.", ["a word"]),
    (
        "a typo of the first letter",
        "They are unable to log in.",
        "They are enable to log in.",
        ["a word"],
    ),
    ("a port", "use port 8080", "use port 8081", ["a number or a date"]),
    (
        "a number word",
        "at two in the morning",
        "at three in the morning",
        ["a number written as a word"],
    ),
    ("a name", "Ask Ada about it.", "Ask Alan about it.", ["a name"]),
    ("a character of a sentence", "数据库迁移到新的磁盘上", "数据库迁移到新的硬盘上", ["a word"]),
    # A numeral or a weekday inside a sentence written without spaces is a number or a date,
    # not a word as well.
    ("a numeral in a sentence", "部署四个服务器", "部署五个服务器", ["a number or a date"]),
    ("a weekday in a sentence", "会议改到星期三举行", "会议改到星期四举行", ["a weekday"]),
]

NOT_WARNED = [
    ("case", "Ada prefers dark mode.", "ADA PREFERS DARK MODE."),
    ("punctuation", "Backups run nightly.", "Backups run nightly!"),
    ("spacing", "Backups  run nightly.", "Backups run nightly."),
    ("a swap", "The billing service is monitored.", "The billing service is mnoitored."),
    ("a letter left out", "Links always point back.", "Links alway point back."),
    ("a plural", "in the terminal", "in the terminals"),
    ("a word moved", "Ada owns it on Monday", "On Monday Ada owns it"),
]


@pytest.mark.parametrize(
    ("older", "newer", "labels"), [c[1:] for c in WARNED], ids=[c[0] for c in WARNED]
)
def test_texts_that_may_state_another_fact_are_warned_of(older, newer, labels):
    differences = text_differences(older, newer)
    assert differences.warns
    assert differences.labels == labels


@pytest.mark.parametrize(
    ("older", "newer"), [c[1:] for c in NOT_WARNED], ids=[c[0] for c in NOT_WARNED]
)
def test_case_punctuation_spacing_and_typos_are_not_warned_of(older, newer):
    assert text_differences(older, newer).warns is False


def test_a_changed_word_names_both_sides_and_its_reason():
    differences = text_differences("Grace recommended it.", "Ada recommended it.")
    assert differences.words == (WordFlag("word", ("Grace",), ("Ada",)),)
    assert differences.reason == "the texts differ in a word"


def test_a_word_flagged_by_kind_is_not_repeated_as_a_word():
    assert changed_words("Ask Ada about it.", "Ask Alan about it.") is None


@pytest.mark.parametrize(
    ("a", "b", "typo"),
    [
        ("refreshed", "refershed", True),
        ("always", "alway", True),
        ("form", "from", False),  # too short to tell a typo from another word
        ("unable", "enable", False),  # the first letter
        ("eighty", "ninety", False),
        ("import", "export", False),
    ],
)
def test_a_typo_is_one_edit_in_a_long_word_its_first_letter_kept(a, b, typo):
    assert is_typo(a, b) is typo


def test_names_differ_in_numbers_alone():
    assert name_differences("server-01", "server-02").warns
    assert not name_differences("Ada", "Ada L.").warns


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Don't restart the nightly job.", "Don\u2019t restart the nightly job."),
        ("Book a follow-up call.", "Book a follow up call."),
        ("We co-operate with ops.", "We co\u2010operate with ops."),
    ],
)
def test_a_normalised_copy_differs_in_no_word(a, b):
    """An apostrophe or a hyphen is punctuation: a review found such copies held back."""
    assert text_differences(a, b).words == ()


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "\u0935\u0939 \u0926\u093f\u0928 \u0925\u093e",
            "\u0935\u0939 \u0926\u0940\u0928 \u0925\u093e",
        ),
        ("forest \u0e1b\u0e48\u0e32 here", "forest \u0e1b\u0e49\u0e32 here"),
    ],
    ids=["Devanagari vowel sign", "Thai tone mark"],
)
def test_a_word_differing_in_its_marks_is_a_changed_word(a, b):
    """A vowel sign or a tone mark makes another word ("दिन" day, "दीन" poor): the word's marks
    are its own."""
    assert text_differences(a, b).reason == "the texts differ in a word"
