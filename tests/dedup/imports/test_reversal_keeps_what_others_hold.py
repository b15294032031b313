"""Reversing an import removes no drawer someone else has since counted as stored: a later
import's record (the drawer goes over to that import) or a later write of the same memory."""

import json
import time
from pathlib import Path

import pytest
from django.db import connection

from dedup import imports, services
from dedup.imports import chunks, formats
from dedup.imports import reverse as reverse_module
from palace.models import Drawer, DrawerLink, DrawerRestatement, Import
from tests.dedup.imports import test_unfinished_reversal as unfinished
from tests.races import race

pytestmark = pytest.mark.django_db

RECORDS = [
    ("a", "notes", "Backups run nightly at two in the morning."),
    ("b", "notes", "Restores are tested on the first Monday of each month."),
    ("c", "deploys", "Deploys go out on Tuesdays after the standup."),
]


def mempalace_file(tmp_path: Path, records=RECORDS, name: str = "export.jsonl") -> Path:
    path = tmp_path / name
    lines = [
        {"id": id, "document": text, "metadata": {"wing": "w", "room": room}}
        for id, room, text in records
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def run(path: Path, format: str = "mempalace") -> Import:
    imported = imports.import_create(source=str(path), format=format)
    imports.import_run(imported, path=path)
    imported.refresh_from_db()
    return imported


def reasons(reversal) -> dict[str, list[str]]:
    return {kept["drawer"]: kept["reasons"] for kept in reversal.kept}


def test_a_second_import_of_the_same_file_records_what_it_found(tmp_path):
    first = run(mempalace_file(tmp_path))
    second = run(mempalace_file(tmp_path))
    assert second.drawers.count() == 0
    assert set(second.found.all()) == set(first.drawers.all())


def test_reversing_the_first_hands_its_drawers_to_the_second(tmp_path):
    first = run(mempalace_file(tmp_path))
    second = run(mempalace_file(tmp_path))
    reversal = imports.import_reverse(imported=first)
    assert reversal.removed == []
    assert Drawer.objects.count() == 3
    handed = (
        f"import {second.pk} counted it as stored (one of its records): it is that import's now"
    )
    assert list(reasons(reversal).values()) == [[handed]] * 3
    assert second.drawers.count() == 3
    assert second.found.count() == 0


def test_then_reversing_the_second_removes_them(tmp_path):
    first = run(mempalace_file(tmp_path))
    second = run(mempalace_file(tmp_path))
    imports.import_reverse(imported=first)
    reversal = imports.import_reverse(imported=second)
    assert reversal.kept == []
    assert Drawer.objects.count() == 0


def test_an_exact_copy_under_another_id_is_found_too(tmp_path):
    first = run(mempalace_file(tmp_path))
    renamed = [(f"other-{id}", room, text) for id, room, text in RECORDS[:1]]
    second = run(mempalace_file(tmp_path, renamed, name="other.jsonl"))
    original = Drawer.objects.get(uuid=imports.client_id("mempalace", "w", "a"))
    assert list(second.found.all()) == [original]
    imports.import_reverse(imported=first)
    assert list(Drawer.objects.all()) == [original]
    assert list(second.drawers.all()) == [original]


def test_the_links_a_handed_drawer_made_go_with_it(tmp_path):
    before = services.drawer_write_in(
        wing="w", room="notes", content="Backups run nightly at two in the mornings."
    )
    first = run(mempalace_file(tmp_path))
    second = run(mempalace_file(tmp_path))
    mine = Drawer.objects.get(uuid=imports.client_id("mempalace", "w", "a"))
    link = DrawerLink.objects.get(newer=mine, older=before.drawer)
    imports.import_reverse(imported=first)
    assert list(second.links.all()) == [link]
    reversal = imports.import_reverse(imported=second)
    assert str(mine.uuid) in reversal.removed


def test_a_reversed_finder_is_no_heir(tmp_path):
    first = run(mempalace_file(tmp_path))
    second = run(mempalace_file(tmp_path))
    imports.import_reverse(imported=second)
    reversal = imports.import_reverse(imported=first)
    assert len(reversal.removed) == 3
    assert Drawer.objects.count() == 0


def test_the_oldest_live_finder_is_the_heir(tmp_path):
    first = run(mempalace_file(tmp_path))
    second = run(mempalace_file(tmp_path))
    third = run(mempalace_file(tmp_path))
    imports.import_reverse(imported=first)
    assert second.drawers.count() == 3
    assert third.found.count() == 3
    imports.import_reverse(imported=second)
    assert third.drawers.count() == 3
    assert Drawer.objects.count() == 3


def test_an_import_does_not_find_its_own_drawers(tmp_path, monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_SIZE", 2)
    text = RECORDS[0][2]
    twice = [("a", "notes", text), ("b", "notes", "Other."), ("c", "notes", text)]
    imported = run(mempalace_file(tmp_path, twice))  # the copy lands in the next chunk
    assert imported.found.count() == 0
    assert len(imports.import_reverse(imported=imported).removed) == 2


def test_a_later_write_of_the_same_memory_keeps_the_drawer(tmp_path):
    imported = run(mempalace_file(tmp_path))
    written = services.drawer_write_in(wing="w", room="notes", content=RECORDS[0][2])
    assert written.created is False
    reversal = imports.import_reverse(imported=imported)
    assert reasons(reversal) == {
        str(written.drawer.uuid): ["a later write stated it again (an exact copy)"]
    }
    assert Drawer.objects.filter(pk=written.drawer.pk).exists()


def test_a_restatement_is_marked_once(tmp_path):
    run(mempalace_file(tmp_path))
    first = services.drawer_write_in(wing="w", room="notes", content=RECORDS[0][2])
    marked = DrawerRestatement.objects.get(drawer=first.drawer).first_at
    services.drawer_write_in(wing="w", room="notes", content=RECORDS[0][2])
    assert DrawerRestatement.objects.get(drawer=first.drawer).first_at == marked


def test_a_replayed_id_is_no_restatement():
    from uuid import uuid4

    drawer_id = uuid4()
    first = services.drawer_write_in(wing="w", room="r", content="Once.", drawer_id=drawer_id)
    services.drawer_write_in(wing="w", room="r", content="Once.", drawer_id=drawer_id)
    assert not DrawerRestatement.objects.filter(drawer=first.drawer).exists()


def test_the_same_named_drawer_written_again_is_a_restatement():
    first = services.drawer_write_in(wing="w", room="r", content="Port 5433.", name="db-port")
    again = services.drawer_write_in(wing="w", room="r", content="Port 5433.", name="db-port")
    assert again.created is False
    assert DrawerRestatement.objects.filter(drawer=first.drawer).exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_a_reversal_racing_a_second_import_of_the_file_loses_no_record(tmp_path, monkeypatch):
    """The second import runs in a worker thread while the first is reversed: each record it
    found before the reversal is handed over to it, each after is stored anew; either way every
    record of the file is stored once, and the second import holds every one."""
    monkeypatch.setattr(chunks, "CHUNK_SIZE", 5)
    count = 200
    path = unfinished.mempalace_file(tmp_path, count)
    first = run(path)
    second = imports.import_create(source=str(path), format="mempalace")
    outcome, reversal = unfinished.reverse_while_running(second, path, 40, first)
    assert "error" not in outcome
    assert len(reversal.kept) >= 40
    assert unfinished.file_drawers(count) == count
    assert second.drawers.count() == count
    assert second.found.count() == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_reversing_both_imports_at_once_leaves_neither(tmp_path):
    """The first's reversal hands its drawers to the second unless the second is reversed
    first; in either order both succeed (the second's reversal holds the room the first's does)
    and the file's drawers are gone."""
    path = unfinished.mempalace_file(tmp_path, 30)
    first = run(path)
    more = [(f"new-{n}", "r", f"A record of the second alone, number {n}.") for n in range(10)]
    more_path = mempalace_file(tmp_path, more, name="more.jsonl")
    more_path.write_text(path.read_text() + more_path.read_text())  # its own drawers too
    second = run(more_path)
    answers = race(
        lambda: imports.import_reverse(imported=first),
        lambda: imports.import_reverse(imported=second),
    )
    assert [type(answer).__name__ for answer in answers] == ["Reversal", "Reversal"]
    assert unfinished.file_drawers(30) == 0
    assert Drawer.objects.count() == 0


def record(source_id: str, text: str) -> formats.Record:
    return formats.Record(
        file="f.jsonl", line=1, source_id=source_id, content=text, wing="w", room="r"
    )


def running(name: str) -> Import:
    imported = imports.import_create(source=name, format="mempalace")
    Import.objects.filter(pk=imported.pk).update(status=Import.Status.RUNNING)
    imported.refresh_from_db()
    return imported


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_two_imports_that_found_each_others_drawers_reverse_at_once(monkeypatch):
    """A and B ran at the same time over the same memories under other ids: each created some
    and found the other's. Reversing both at once must not deadlock."""
    one, two = "The backup runs nightly at two.", "Restores are tested every Monday."
    first, second = running("a"), running("b")
    writer_a, writer_b = (
        chunks.ChunkWriter(first, chunks.Tally()),
        chunks.ChunkWriter(second, chunks.Tally()),
    )
    writer_a.add(record("a-1", one))
    writer_a.flush()  # A creates one
    writer_b.add(record("b-1", one))  # B finds A's
    writer_b.add(record("b-2", two))  # B creates two
    writer_b.flush()
    writer_a.add(record("a-2", two))  # A finds B's
    writer_a.flush()
    assert first.found.count() == 1
    assert second.found.count() == 1

    held = reverse_module._imports_held

    def slow(own, finders):  # both read their finders before either holds a row
        time.sleep(0.5)
        return held(own, finders)

    monkeypatch.setattr(reverse_module, "_imports_held", slow)
    answers = race(
        lambda: imports.import_reverse(imported=first),
        lambda: imports.import_reverse(imported=second),
    )
    assert [type(answer).__name__ for answer in answers] == ["Reversal", "Reversal"]


VARIANT = "Backups run nightly at two in the mornings."  # a near variant of RECORDS[0]


def test_a_drawer_only_another_imports_variant_links_to_goes_to_it(tmp_path):
    """X stored the original, Y later a variant of it (Y's link): reversing X keeps the
    original for Y, and reversing Y then removes both, as reversing Y first would have."""
    first = run(mempalace_file(tmp_path))
    second = run(mempalace_file(tmp_path, [("v", "notes", VARIANT)], name="variant.jsonl"))
    original = Drawer.objects.get(uuid=imports.client_id("mempalace", "w", "a"))
    reversal = imports.import_reverse(imported=first)
    assert reasons(reversal) == {
        str(original.uuid): [
            "a later drawer links to it",
            f"only import {second.pk}'s drawers link to it: it is that import's now",
        ]
    }
    assert second.drawers.filter(pk=original.pk).exists()
    imports.import_reverse(imported=second)
    assert Drawer.objects.count() == 0


def test_a_write_linking_to_it_still_keeps_it_for_good(tmp_path):
    first = run(mempalace_file(tmp_path))
    services.drawer_write_in(wing="w", room="notes", content=VARIANT)
    second = run(mempalace_file(tmp_path, [("v", "notes", VARIANT)], name="variant.jsonl"))
    reversal = imports.import_reverse(imported=first)
    original = str(imports.client_id("mempalace", "w", "a"))
    assert reasons(reversal) == {original: ["a later drawer links to it"]}
    assert second.found.count() == 1


def test_three_imports_in_a_chain_reversed_leave_the_store_as_before(tmp_path):
    """A stored an original and its variant (linked); B found the original, C the variant.
    Reversing A hands each over; reversing B then hands the original to C, whose variant
    links to it; reversing C removes both."""
    chain = [("o", "notes", RECORDS[0][2]), ("v", "notes", VARIANT)]
    first = run(mempalace_file(tmp_path, chain))
    second = run(mempalace_file(tmp_path, chain[:1], name="original.jsonl"))
    third = run(mempalace_file(tmp_path, chain[1:], name="variant.jsonl"))
    assert (second.found.count(), third.found.count()) == (1, 1)
    imports.import_reverse(imported=first)
    imports.import_reverse(imported=second)
    assert third.drawers.count() == 2
    imports.import_reverse(imported=third)
    assert Drawer.objects.count() == 0
    assert DrawerLink.objects.count() == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_reversing_an_import_and_one_linking_to_it_at_once_leaves_neither(tmp_path):
    originals = [
        (f"o{n}", "r", f"The nightly job number {n} copies the ledger.") for n in range(20)
    ]
    variants = [
        (f"v{n}", "r", f"The nightly job number {n} copies the ledgers.") for n in range(20)
    ]
    first = run(mempalace_file(tmp_path, originals))
    second = run(mempalace_file(tmp_path, variants, name="variants.jsonl"))
    assert second.links.count() >= 20
    answers = race(
        lambda: imports.import_reverse(imported=first),
        lambda: imports.import_reverse(imported=second),
    )
    assert [type(answer).__name__ for answer in answers] == ["Reversal", "Reversal"]
    assert Drawer.objects.count() == 0


def test_the_summary_lists_a_large_reversals_first_drawers_and_counts_them(tmp_path, monkeypatch):
    """Every id of a reversal of 100,000 drawers was in the summary each answer carries."""
    monkeypatch.setattr(reverse_module, "LISTED", 2)
    imported = run(mempalace_file(tmp_path))
    reversal = imports.import_reverse(imported=imported)
    imported.refresh_from_db()
    listed = imported.summary["reversal"]
    assert len(listed["removed"]) == 2
    assert listed["removed_count"] == 3
    assert len(reversal.removed) == 3  # the caller, the command and the audit row: whole
