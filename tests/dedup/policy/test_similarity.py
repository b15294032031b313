import pytest

from dedup.policy import EDIT_DISTANCE_LIMIT, edit_distance, similarity, similarity_of_normalized
from tests.conformance.loader import expectations, holds, params, text_of


@pytest.mark.parametrize("case", params("similarity"))
def test_similarity_conformance(case):
    given = case["input"]
    a = text_of(given, "a", "python_a")
    b = text_of(given, "b", "python_b")
    expect = expectations(case, {"value"})
    assert holds(similarity(a, b), expect["value"])


@pytest.mark.parametrize("case", params("edit_distance"))
def test_edit_distance_conformance(case):
    expect = expectations(case, {"distance"})
    assert edit_distance(case["input"]["a"], case["input"]["b"]) == expect["distance"]


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        pytest.param("ab", "ba", 1, id="adjacent-swap-one-edit"),
        # Unrestricted Damerau-Levenshtein says 2 here; OSA may not edit a substring twice.
        pytest.param("ca", "abc", 3, id="osa-not-unrestricted-damerau"),
        pytest.param("kitten", "sitting", 3, id="levenshtein-classic"),
        pytest.param("", "abc", 3, id="empty"),
    ],
)
def test_edit_distance_is_optimal_string_alignment(a, b, distance):
    assert edit_distance(a, b) == distance


def test_similarity_is_one_minus_distance_over_longer_length():
    assert similarity("abcdefghij", "abcdefghiX") == pytest.approx(0.9)
    assert similarity_of_normalized("abcd", "abxd") == 0.75


def test_equal_nonempty_scores_one_and_two_empty_score_zero():
    assert similarity("Same words.", "same words") == 1.0
    assert similarity("...", "!!!") == 0.0
    assert similarity("", "abc") == 0.0


def test_edit_similarity_up_to_the_limit_and_trigrams_beyond():
    base = "a" * (EDIT_DISTANCE_LIMIT - 1) + "b"
    at_limit = similarity_of_normalized(base, base[:-1] + "c")
    assert at_limit == (EDIT_DISTANCE_LIMIT - 1) / EDIT_DISTANCE_LIMIT  # edit similarity
    long_a = "x y z " * 400 + "unique tail words"
    long_b = "x y z " * 400 + "unique tail wards"
    assert len(long_a) > EDIT_DISTANCE_LIMIT
    from dedup.policy.similarity import trigrams

    grams_a, grams_b = trigrams(long_a), trigrams(long_b)
    jaccard = len(grams_a & grams_b) / len(grams_a | grams_b)
    assert similarity_of_normalized(long_a, long_b) == jaccard


def test_similarity_is_symmetric():
    a, b = "We decided to use Postgres", "We decided to use SurrealDB"
    assert similarity(a, b) == similarity(b, a)
