import random

import pytest

from dedup.policy import (
    MIN_NEAR_CHARS,
    Text,
    Verdict,
    assess,
    classify,
    content_hash,
    fingerprint,
    may_have_verdict,
    near_length_range,
    normalize_text,
)
from tests.conformance.loader import expectations, params


@pytest.mark.parametrize("case", params("classify"))
def test_classify_conformance(case):
    given, expect = case["input"], expectations(case, {"kind"})
    verdict = classify(
        given["same_hash"], given["same_fingerprint"], given["similarity"], given["threshold"]
    )
    assert (verdict.value if verdict else None) == expect["kind"]


@pytest.mark.parametrize(
    ("same_hash", "same_fingerprint", "score", "threshold", "expected"),
    [
        pytest.param(True, False, 0.0, 0.9, Verdict.EXACT, id="hash-wins-over-everything"),
        pytest.param(False, True, 0.0, 0.9, Verdict.NORMALIZED, id="fingerprint-beats-score"),
        pytest.param(False, False, 0.9, 0.9, Verdict.NEAR, id="threshold-is-inclusive"),
        pytest.param(False, False, 0.8999999, 0.9, None, id="just-below-threshold"),
        pytest.param(False, False, 1.0, 1.0, Verdict.NEAR, id="threshold-one-inclusive"),
        pytest.param(False, False, 0.5, 0.5, Verdict.NEAR, id="lowest-threshold-inclusive"),
    ],
)
def test_classify_rules(same_hash, same_fingerprint, score, threshold, expected):
    assert classify(same_hash, same_fingerprint, score, threshold) == expected


def test_short_text_is_never_near():
    assert classify(False, False, 0.99, 0.9, near_allowed=False) is None
    assert classify(False, True, 1.0, 0.9, near_allowed=False) == Verdict.NORMALIZED
    assert classify(True, True, 1.0, 0.9, near_allowed=False) == Verdict.EXACT


def text(raw: str) -> Text:
    return Text(content_hash(raw), normalize_text(raw), fingerprint(raw))


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        # "abcdefghijk" is 11 normalised characters, "abcdefghijkl" 12.
        pytest.param("abcdefghijX", "abcdefghijk", None, id="11-chars-one-letter-off-not-near"),
        pytest.param("Use cat.", "Use car.", None, id="cat-car"),
        pytest.param("USE CAT", "Use cat.", Verdict.NORMALIZED, id="short-normalized-ok"),
        pytest.param("Use cat.", "Use cat.", Verdict.EXACT, id="short-exact-ok"),
    ],
)
def test_assess_short_texts(new, old, expected):
    assert assess(text(new), text(old), threshold=0.9).verdict == expected


def test_twelve_normalised_characters_may_be_near():
    # 12 characters, one edit: similarity 11/12 = 0.9166 >= 0.9.
    new, old = "abcdefghijkX", "abcdefghijkl"
    assert len(normalize_text(new)) == MIN_NEAR_CHARS
    result = assess(text(new), text(old), threshold=0.9)
    assert result.signals.similarity == 11 / 12
    # Just under the limit, the same one-letter change is never near, even at a low threshold.
    eleven = assess(text("abcdefghijX"), text("abcdefghijk"), threshold=0.5)
    assert eleven.verdict is None
    assert eleven.signals.similarity == 10 / 11
    assert assess(text(new), text(old), threshold=0.5).verdict == Verdict.NEAR


def test_near_at_threshold_is_inclusive_end_to_end():
    # 20 characters, 2 edits: similarity exactly 0.9.
    new, old = "abcdefghijklmnopqrXY", "abcdefghijklmnopqrst"
    result = assess(text(new), text(old), threshold=0.9)
    assert result.signals.similarity == 0.9
    assert result.verdict == Verdict.NEAR
    assert assess(text(new), text(old), threshold=0.91).verdict is None


def test_assessment_explains_itself():
    result = assess(text("We use port 8080 today"), text("we use port 8080 today!"), threshold=0.9)
    assert result.verdict == Verdict.NORMALIZED
    assert result.signals.as_dict() == {
        "same_hash": False,
        "same_fingerprint": True,
        "similarity": 1.0,
        "threshold": 0.9,
    }


def test_near_miss_numbers_are_near_not_normalized():
    result = assess(
        text("Always use port 8081 for the API"),
        text("Always use port 8080 for the API"),
        threshold=0.9,
    )
    assert result.verdict == Verdict.NEAR
    assert not result.signals.same_fingerprint


def test_may_have_verdict_skips_only_pairs_lengths_rule_out():
    # 20 against 18 characters: at best 18/20 = 0.9, near at 0.9 (inclusive), not at 0.91.
    new, old = text("abcdefghijklmnopqrst"), text("abcdefghijklmnopqr")
    assert may_have_verdict(new, old, threshold=0.9)
    assert assess(new, old, threshold=0.9).verdict == Verdict.NEAR
    assert not may_have_verdict(new, old, threshold=0.91)
    assert not may_have_verdict(
        text("abcdefghijklmnopqrst"), text("abcdefghijklmnopq"), threshold=0.9
    )
    # Same bytes or same normal form always have a verdict, whatever the lengths.
    assert may_have_verdict(text("Hi!"), text("Hi!"), threshold=0.9)
    assert may_have_verdict(text("HI"), text("hi!!!!!!"), threshold=0.9)
    # A short new text is only ever exact or normalized.
    assert not may_have_verdict(text("use cat"), text("use car"), threshold=0.5)
    # Beyond the edit-distance limit lengths bound nothing.
    assert may_have_verdict(text("a b " * 1200), text("a " * 1200), threshold=0.99)


@pytest.mark.parametrize("threshold", [0.5, 0.8, 0.9, 0.95, 1.0])
def test_may_have_verdict_never_hides_a_verdict(threshold):
    rng = random.Random(threshold)
    for _ in range(500):
        base = "".join(rng.choice("ab ") for _ in range(rng.randint(10, 40)))
        other = list(base)
        for _ in range(rng.randint(0, 6)):
            position = rng.randrange(len(other) + 1)
            if rng.random() < 0.5 and other:
                del other[position - 1]
            else:
                other.insert(position, rng.choice("abc"))
        new, old = text(base), text("".join(other))
        if assess(new, old, threshold=threshold).verdict is not None:
            assert may_have_verdict(new, old, threshold=threshold), (base, other)


@pytest.mark.parametrize("threshold", [0.5, 0.75, 0.9, 0.91, 0.95, 1.0])
def test_near_length_range_is_exactly_the_lengths_may_have_verdict_allows(threshold):
    for length in [*range(12, 80), 999, 1818, 1819, 2000]:
        low, high = near_length_range(length, threshold)
        new = text("x" * length)
        for other in range(1, 2300, 1 if length < 80 else 7):
            old = Text("h", "y" * other, None)
            inside = (low <= other and (high is None or other <= high)) or other > 2000
            assert inside == may_have_verdict(new, old, threshold=threshold), (length, other)
    assert near_length_range(20, 0.9) == (18, 22)
    assert near_length_range(100, 1.0) == (100, 100)
    assert near_length_range(2001, 0.9) == (0, None)
    assert near_length_range(0, 0.9) == (1, 0)  # empty: no length at all


def test_text_of_content_is_its_hash_normal_form_and_fingerprint():
    derived = Text.of("Use port 8080!")
    assert derived == Text(
        content_hash("Use port 8080!"), "use port 8080", fingerprint("Use port 8080!")
    )
    assert Text.of("...").fingerprint is None


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("!!!", id="punctuation-only"),
        pytest.param("   ...   ", id="dots-and-spaces"),
        pytest.param("Use the staging database.", id="words"),
    ],
)
def test_an_exact_copy_scores_one_with_or_without_letters(content):
    """Issue 10, item 17: identical bytes are as alike as texts can be, even with no word."""
    result = assess(text(content), text(content), threshold=0.9)
    assert result.verdict == Verdict.EXACT
    assert result.signals.similarity == 1.0


def test_texts_without_letters_that_differ_still_score_zero():
    # Not the same bytes, and no fingerprint to compare: nothing says they are alike.
    result = assess(text("!!!"), text("???"), threshold=0.9)
    assert result.verdict is None
    assert result.signals.similarity == 0.0
