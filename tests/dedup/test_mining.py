import pytest
from django.core.management import call_command

from dedup import mining
from palace.models import Drawer, DrawerLink

pytestmark = pytest.mark.django_db

DECISION = "We decided to use SurrealDB for storage because one engine covers documents, graph and vectors."


def mine(folder, capsys, *extra):
    call_command("mine", str(folder), "--wing", "docs", *extra)
    out, err = capsys.readouterr()
    return dict(line.split(": ") for line in out.strip().splitlines()), err


def test_identical_files_are_two_records_linked(tmp_path, capsys, dedup_settings):
    (tmp_path / "a.md").write_text(DECISION)
    (tmp_path / "b.md").write_text(DECISION)
    (tmp_path / "ignored.py").write_text("print('not a document')")
    counts, progress = mine(tmp_path, capsys)
    assert (counts["documents"], counts["created"], counts["similar"]) == ("2", "2", "1")
    assert "mining" in progress
    assert "2/2" in progress
    assert Drawer.objects.count() == 2
    assert DrawerLink.objects.get().verdict == "exact"
    assert Drawer.objects.first().room.name == tmp_path.name


def test_rerun_on_unchanged_files_stores_nothing(tmp_path, capsys, dedup_settings):
    (tmp_path / "a.md").write_text(DECISION + "\n\nA second paragraph about backups.")
    mine(tmp_path, capsys)
    counts, _ = mine(tmp_path, capsys, "--room", tmp_path.name)
    assert (counts["created"], counts["unchanged"]) == ("0", "1")
    assert Drawer.objects.count() == 1


def test_changed_file_supersedes_what_it_no_longer_says(tmp_path, capsys, dedup_settings):
    document = tmp_path / "notes.txt"
    document.write_text("First version of the notes about the build system.")
    mine(tmp_path, capsys)
    document.write_text("Second version of the notes about the build system.")
    counts, _ = mine(tmp_path, capsys)
    assert (counts["created"], counts["superseded"]) == ("1", "1")
    assert Drawer.objects.current().get().content.startswith("Second")


def test_invalid_utf8_file_is_skipped_and_reported(tmp_path, capsys, dedup_settings):
    (tmp_path / "bad.md").write_bytes(b"\xff\xfe not text")
    counts, _ = mine(tmp_path, capsys)
    assert (counts["documents"], counts["skipped"]) == ("0", "1")


def test_missing_path_is_a_clear_error(tmp_path):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="does not exist"):
        call_command("mine", str(tmp_path / "nope"), "--wing", "docs")


@pytest.mark.parametrize(
    ("text", "size", "expected"),
    [
        ("one\n\ntwo\n\nthree", 100, ["one\n\ntwo\n\nthree"]),
        ("aaaa\n\nbbbb", 6, ["aaaa", "bbbb"]),
        ("line one\nline two", 9, ["line one", "line two"]),
        ("x" * 25, 10, ["x" * 10, "x" * 10, "x" * 5]),
        ("  \n\n  ", 10, []),
    ],
    ids=["packs-paragraphs", "splits-at-paragraphs", "cuts-at-lines", "hard-cut", "empty"],
)
def test_chunks(text, size, expected):
    assert list(mining.chunks(text, size=size)) == expected
