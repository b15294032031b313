"""The numbers gate agrees with the console's warning: a number written as a word, a weekday or
a month changed is a fact changed, as a digit is; a name is the entities gate's, and a typo or
a case change is nothing."""

from types import SimpleNamespace

import pytest

from dedup.policy.merge_gates import drawer_gates, gates_pass


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
