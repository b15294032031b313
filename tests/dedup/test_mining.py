import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from dedup import mining
from palace.models import Drawer, DrawerLink, Room, Wing

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


def test_a_file_holding_a_nul_byte_is_skipped_by_name(tmp_path, capsys, caplog, dedup_settings):
    (tmp_path / "a.md").write_text(DECISION)
    (tmp_path / "blob.txt").write_bytes(b"Rotate the tokens\x00 daily.")
    counts, _ = mine(tmp_path, capsys)
    assert (counts["documents"], counts["created"], counts["skipped"]) == ("1", "1", "1")
    assert "skipped blob.txt: content must not contain NUL bytes." in caplog.messages
    assert Drawer.objects.get().content == DECISION


def test_a_file_is_skipped_whole_when_a_later_chunk_holds_a_nul_byte(
    tmp_path, capsys, dedup_settings
):
    long_paragraph = "A paragraph about the backups of the build cache. " * 40
    (tmp_path / "blob.md").write_text(f"{long_paragraph}\n\nThe last one\x00 is binary.")
    counts, _ = mine(tmp_path, capsys)
    assert counts["skipped"] == "1"
    assert not Drawer.objects.exists()


@pytest.mark.parametrize(
    "files", [{"blob.txt": b"\x00"}, {"bad.md": b"\xff\xfe"}, {}], ids=["nul", "not-utf8", "none"]
)
def test_a_run_that_stores_nothing_leaves_no_wing_or_room(tmp_path, capsys, dedup_settings, files):
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    counts, _ = mine(tmp_path, capsys)
    assert counts["created"] == "0"
    assert not Wing.objects.exists()
    assert not Room.objects.exists()


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--wing", "   ", "wing must not be blank"),
        ("--wing", "w" * 101, "wing must be at most 100 characters"),
        ("--room", "", "room must not be blank"),
        ("--room", "bad\x01room", "room must not contain control characters"),
    ],
    ids=["blank wing", "long wing", "empty room", "control room"],
)
def test_a_wing_or_room_the_write_path_refuses_ends_the_run_before_it_starts(
    tmp_path, capsys, dedup_settings, option, value, message
):
    (tmp_path / "a.md").write_text(DECISION)
    arguments = {"--wing": "docs", option: value}
    with pytest.raises(CommandError, match=message):
        call_command("mine", str(tmp_path), *[part for pair in arguments.items() for part in pair])
    assert "mining" not in capsys.readouterr().err  # no progress bar was started
    assert not Wing.objects.exists()


def test_a_folder_name_that_cannot_be_a_room_is_refused(tmp_path, capsys, dedup_settings):
    folder = tmp_path / ("r" * 101)
    folder.mkdir()
    (folder / "a.md").write_text(DECISION)
    with pytest.raises(CommandError, match="room must be at most 100 characters"):
        call_command("mine", str(folder), "--wing", "docs")
    assert "mining" not in capsys.readouterr().err
    assert not Wing.objects.exists()


def test_missing_path_is_a_clear_error(tmp_path):
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
