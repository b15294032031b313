"""The numbers gate agrees with the console's warning: a number written as a word, a weekday or
a month changed is a fact changed, as a digit is; a name is the entities gate's, and a typo or
a case change is nothing."""

from types import SimpleNamespace

import pytest

from dedup.policy.merge_gates import drawer_gates, gates_pass, with_symbols_gate


def gates(older: str, newer: str) -> dict:
    memory = lambda text: SimpleNamespace(kind="", content=text)  # noqa: E731
    return drawer_gates(memory(newer), memory(older), set(), set())


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Backups are kept for one day.", "Backups are kept for two day."),
        ("The standup moved to Monday morning.", "The standup moved to Friday morning."),
        ("The audit is due in March next year.", "The audit is due in April next year."),
        ("Use port 8080 for the API.", "Use port 8081 for the API."),
    ],
)
def test_a_number_or_date_changed_fails_the_gate(older, newer):
    assert gates(older, newer)["numbers_differ"] is True
    assert not gates_pass(gates(older, newer))


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Backups are kept for one day.", "Backups are kept for one dya."),
        ("Backups are kept for one day.", "BACKUPS ARE KEPT FOR ONE DAY."),
        ("Ada reviews the backups.", "Alan reviews the backups."),
    ],
)
def test_a_typo_a_case_or_a_name_passes_it(older, newer):
    assert gates(older, newer)["numbers_differ"] is False


ALLOWED = "Friday deploys are allowed for the billing service: \u2705"


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        pytest.param(ALLOWED, ALLOWED.replace("\u2705", "\u274c"), id="check-cross"),
        pytest.param(
            "Ship to \U0001f1eb\U0001f1f7 first.", "Ship to \U0001f1e9\U0001f1ea first.", id="flags"
        ),
        pytest.param("Alert when latency < 5 ms.", "Alert when latency > 5 ms.", id="comparison"),
        pytest.param(
            "The plan costs 5 $ a seat.", "The plan costs 5 \u20ac a seat.", id="currency"
        ),
    ],
)
def test_a_symbol_changed_fails_the_gate_though_the_words_are_the_same(older, newer):
    """A curator's trial: "...: ✅" and "...: ❌" were a normalized pair (the same words),
    warned of nothing and merged by a bulk merge; a sweep's apply would have merged them too."""
    assert gates(older, newer)["symbols_differ"] is True
    assert not gates_pass(gates(older, newer))


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        pytest.param(ALLOWED, ALLOWED.upper(), id="case"),
        pytest.param("Great work \U0001f44d\U0001f3fd", "Great work \U0001f44d", id="skin-tone"),
        pytest.param("Done \u2705\ufe0f", "Done \u2705", id="presentation-selector"),
        pytest.param("a \uff0b b", "a + b", id="full-width"),
    ],
)
def test_a_symbol_kept_passes_it(older, newer):
    assert gates(older, newer)["symbols_differ"] is False


def test_a_proposal_stored_before_the_symbols_gate_is_asked_it_of_its_texts():
    stored = {"same_kind": None, "same_entities": None, "numbers_differ": False}
    texts = {"older": ALLOWED, "newer": ALLOWED.replace("\u2705", "\u274c")}
    assert not gates_pass(with_symbols_gate(stored, texts))
    assert gates_pass(with_symbols_gate(stored, {"older": ALLOWED, "newer": ALLOWED}))
