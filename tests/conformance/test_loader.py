import pytest

from tests.conformance.loader import UnknownExpectation, cases, expectations


def test_a_function_case_with_an_expect_key_nobody_checks_fails():
    case = {"id": "fake", "fn": "similarity", "input": {}, "expect": {"value": 1, "surprise": 2}}
    with pytest.raises(UnknownExpectation, match=r"case 'fake': expect key\(s\) \['surprise'\]"):
        expectations(case, {"value"})


def test_a_function_case_with_only_known_keys_passes_through():
    case = {"id": "fake", "fn": "similarity", "input": {}, "expect": {"value": 1}}
    assert expectations(case, {"value", "other"}) == {"value": 1}


def test_every_function_in_the_cases_is_tested():
    # A new array of cases would otherwise be ignored as surely as a new key.
    tested = {
        "normalize_text",
        "fingerprint_equal",
        "similarity",
        "edit_distance",
        "classify",
        "entity_key",
        "resolve",
        "scenario",
    }
    assert {name for name in cases() if not name.startswith("_")} - {"constants"} == tested
