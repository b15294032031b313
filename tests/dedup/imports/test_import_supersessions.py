"""A Castellan file's supersessions are taken as `drawer_supersede` would take them: one naming
its own drawer, or closing a cycle, is reported with its line and leaves the drawers current; a
chain (history: A by B, B by C) is taken in any order of its lines."""

import pytest

from dedup import imports
from palace.models import AuditAction, AuditEntry, Drawer
from tests.dedup.imports.test_reverse_own_supersession import castellan, drawer_line

pytestmark = pytest.mark.django_db
WHEN = "2025-01-01T00:00:00+00:00"


def run(path):
    imported = imports.import_create(source=str(path), format="castellan")
    return imports.import_run(imported, path=path)


def drawer(content):
    return Drawer.objects.get(content=content)


def test_a_drawer_superseded_by_itself_is_reported_and_stays_current(tmp_path):
    path = castellan(tmp_path, drawer_line("a", "Alpha fact.", valid_to=WHEN, superseded_by="a"))
    tally = run(path)
    assert [(e["line"], e["error"]) for e in tally.errors] == [
        (1, "A drawer cannot supersede itself (superseded_by names the drawer's own id).")
    ]
    alpha = drawer("Alpha fact.")
    assert (alpha.valid_to, alpha.superseded_by_id) == (None, None)
    assert not AuditEntry.objects.filter(action=AuditAction.DRAWER_SUPERSEDE).exists()


def test_a_cycle_is_refused_at_the_line_closing_it(tmp_path):
    path = castellan(
        tmp_path,
        drawer_line("b", "Beta fact.", valid_to=WHEN, superseded_by="c"),
        drawer_line("c", "Gamma fact.", valid_to=WHEN, superseded_by="b"),
    )
    tally = run(path)
    beta, gamma = drawer("Beta fact."), drawer("Gamma fact.")
    assert [e["line"] for e in tally.errors] == [2]
    assert "a cycle would leave none of them current" in tally.errors[0]["error"]
    assert beta.superseded_by_id == gamma.pk
    assert gamma.valid_to is None


def test_a_chain_is_history_and_taken_in_any_order(tmp_path):
    path = castellan(
        tmp_path,
        drawer_line("b", "Beta fact.", valid_to=WHEN, superseded_by="c"),
        drawer_line("a", "Alpha fact.", valid_to=WHEN, superseded_by="b"),
        drawer_line("c", "Gamma fact."),
    )
    tally = run(path)
    alpha, beta, gamma = drawer("Alpha fact."), drawer("Beta fact."), drawer("Gamma fact.")
    assert tally.errors == []
    assert alpha.superseded_by_id == beta.pk
    assert beta.superseded_by_id == gamma.pk
    assert gamma.valid_to is None


@pytest.mark.parametrize(
    "named",
    ["00000000-0000-4000-8000-000000000000", "not-in-this-file"],
    ids=["a-random-id", "an-id-of-no-line"],
)
def test_a_successor_found_nowhere_is_reported_and_the_drawer_stays_current(tmp_path, named):
    """A line naming a successor that neither the file nor an earlier import holds had ended its
    drawer with no successor and no word (`malformed` empty, the drawer no longer current)."""
    path = castellan(tmp_path, drawer_line("a", "Alpha fact.", valid_to=WHEN, superseded_by=named))
    tally = run(path)
    assert [e["line"] for e in tally.errors] == [1]
    assert "the drawer is left current" in tally.errors[0]["error"]
    assert drawer("Alpha fact.").valid_to is None
    assert not AuditEntry.objects.filter(action=AuditAction.DRAWER_SUPERSEDE).exists()


def test_a_line_ending_its_drawer_with_no_successor_still_ends_it(tmp_path):
    path = castellan(tmp_path, drawer_line("a", "Alpha fact.", valid_to=WHEN))
    tally = run(path)
    assert tally.errors == []
    alpha = drawer("Alpha fact.")
    assert alpha.valid_to is not None
    assert alpha.superseded_by_id is None
