from review.diff import Segment, differing_numbers, side_by_side


def test_typo_shows_as_letters_not_a_whole_word():
    left, right = side_by_side("use the storage engine", "use the storge engine")
    assert Segment("delete", "a") in left
    assert [s.op for s in right] == ["equal", "equal"] or "insert" not in [s.op for s in right]
    assert "".join(s.text for s in left) == "use the storage engine"
    assert "".join(s.text for s in right) == "use the storge engine"


def test_inserted_and_deleted_words():
    left, right = side_by_side("backups run nightly", "backups run every night nightly")
    assert [s for s in right if s.op == "insert"] == [Segment("insert", "every night ")]
    assert not [s for s in left if s.op == "delete"]


def test_changed_digit_is_marked():
    _, right = side_by_side("use port 8080", "use port 8081")
    changed = [s for s in right if s.op == "insert"]
    assert changed == [Segment("insert", "1")]
    assert changed[0].has_digit


def test_numbers_and_dates_that_differ_are_reported():
    assert differing_numbers("use port 8080", "use port 8081") == (["8080"], ["8081"])
    assert differing_numbers("due 2026-03-01 at 10:30", "due 2026-03-02 at 10:30") == (
        ["2026-03-01"],
        ["2026-03-02"],
    )
    assert differing_numbers("same 42 here", "Same 42 here!") == ([], [])
