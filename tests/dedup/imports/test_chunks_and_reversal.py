"""An import written a chunk at a time records exactly what a record-by-record import would, and
its reversal removes exactly that, audited, leaving later work (and the drawers it rests on)."""

import json
from pathlib import Path

import pytest

from dedup import imports, services
from dedup.imports import chunks
from palace.models import (
    AuditAction,
    AuditEntry,
    AuditTarget,
    DistinctPair,
    Drawer,
    DrawerLink,
    Import,
    Room,
)

FIXTURES = Path(__file__).parent / "fixtures"
pytestmark = pytest.mark.django_db


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_SIZE", 2)


def run(path: Path, format: str = "mempalace", **options) -> tuple[Import, imports.Tally]:
    imported = imports.import_create(source=str(path), format=format)
    return imported, imports.import_run(imported, path=path, **options)


def mempalace_file(tmp_path: Path, records: list[tuple[str, str, str]]) -> Path:
    """(id, room, document) records in wing `w`, as MemPalace exports them."""
    path = tmp_path / "export.jsonl"
    lines = [
        {"id": id, "document": text, "metadata": {"wing": "w", "room": room}}
        for id, room, text in records
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_chunks_record_what_the_import_stored(small_chunks):
    reported: list[int] = []
    imported, tally = run(FIXTURES / "mempalace", on_progress=reported.append)
    assert tally.summary() == {
        "files": 2,
        "records": 4,
        "created": 3,
        "exact": 1,
        "similar": 1,
        "malformed": 3,
    }
    assert [(e["file"], e["line"]) for e in tally.errors] == [
        ("deploys.jsonl", 2),
        ("project/notes.jsonl", 3),
        ("project/notes.jsonl", 6),
    ]
    assert imported.drawers.count() == 3
    assert imported.links.count() == 1
    assert reported[-1] == 7  # every record read: 4 drawers, 3 malformed
    imported.refresh_from_db()
    assert imported.progress == 4


def test_a_refused_record_rolls_back_alone(small_chunks, tmp_path):
    path = mempalace_file(
        tmp_path,
        [
            ("a", "notes", "Backups run nightly at two."),
            ("b", "notes", "   "),  # refused by the write path, in the middle of a chunk
            ("c", "notes", "Restores are tested monthly."),
            ("d", "fresh", "   "),  # refused, in a room that does not exist yet
        ],
    )
    imported, tally = run(path)
    assert [e["line"] for e in tally.errors] == [2, 4]
    assert tally.created == 2
    assert imported.drawers.count() == 2
    assert not Room.objects.filter(name="fresh").exists()


def test_a_long_import_is_reversed_whole(small_chunks, tmp_path):
    texts = [f"Runbook step {n}: restart the {n}th worker pool slowly." for n in range(7)]
    records = [(f"r{n}", f"room-{n % 3}", text) for n, text in enumerate(texts)]
    records += [
        ("copy", "room-0", texts[0]),
        ("typo", "room-1", texts[1].replace("slowly", "slwly")),
    ]
    imported, tally = run(mempalace_file(tmp_path, records))
    assert (tally.created, tally.exact) == (8, 1)
    assert imported.drawers.count() == 8
    reversal = imports.import_reverse(imported=imported)
    assert len(reversal.removed) == 8
    assert Drawer.objects.count() == 0


def test_reimporting_in_chunks_stores_nothing(small_chunks):
    run(FIXTURES / "mempalace")
    again, tally = run(FIXTURES / "mempalace")
    assert tally.created == 0
    assert again.drawers.count() == 0


def test_a_later_write_and_its_link_are_left_untouched():
    imported, _ = run(FIXTURES / "mem0.json", "mem0")
    later = services.drawer_write_in(
        wing="alice", room="general", content="Is allergic to peanutss."
    )
    imports.import_reverse(imported=imported)
    assert Drawer.objects.filter(pk=later.drawer.pk).exists()
    assert DrawerLink.objects.filter(newer=later.drawer).count() == len(later.links)


def test_a_link_recorded_by_hand_keeps_the_drawer():
    before = services.drawer_write_in(wing="ops", room="databases", content="Port 5433 is ours.")
    imported, _ = run(FIXTURES / "mempalace")
    mine = Drawer.objects.get(uuid=imports.client_id("mempalace", "ops", "mp-5"))
    link, _ = services.drawer_link(
        newer=mine, older=before.drawer, verdict="near", signals={"similarity": 0.5}
    )
    reversal = imports.import_reverse(imported=imported)
    assert reversal.kept == [
        {
            "drawer": str(mine.uuid),
            "reasons": ["a link was recorded on it since (by a sweep or by hand)"],
        }
    ]
    assert DrawerLink.objects.filter(pk=link.pk).exists()


def test_a_curators_distinct_pair_keeps_the_drawers():
    imported, _ = run(FIXTURES / "mempalace")
    one, three = (
        Drawer.objects.get(uuid=imports.client_id("mempalace", "ops", id))
        for id in ("mp-1", "mp-3")
    )
    DistinctPair.objects.create(**DistinctPair.of(DistinctPair.Kind.DRAWER, one.pk, three.pk))
    reversal = imports.import_reverse(imported=imported)
    assert {kept["drawer"] for kept in reversal.kept} == {str(one.uuid), str(three.uuid)}
    assert "a curator said it is not the same as another drawer" in reversal.kept[0]["reasons"]


def castellan_file(tmp_path: Path, lines: list[dict]) -> Path:
    path = tmp_path / "castellan.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


DEPLOYS = "Deploys go out on Tuesdays after the standup meeting ends."
OWN_MENTION = [
    {"type": "drawer", "id": "d1", "wing": "w", "room": "r", "content": DEPLOYS},
    {"type": "drawer", "id": "d2", "wing": "w", "room": "r", "content": "Backups run nightly."},
    {"type": "drawer", "id": "d3", "wing": "w", "room": "r", "content": DEPLOYS + "x"},
    {"type": "mention", "drawer": "d1", "name": "PostgreSQL", "kind": "technology"},
]


def test_each_removed_drawer_is_audited_with_its_links_and_mentions(tmp_path):
    imported, _ = run(castellan_file(tmp_path, OWN_MENTION), format="castellan")
    original = Drawer.objects.get(uuid=imports.client_id("castellan", "w", "d1"))
    typo = Drawer.objects.get(uuid=imports.client_id("castellan", "w", "d3"))
    imports.import_reverse(imported=imported)
    rows = AuditEntry.objects.filter(
        action=AuditAction.IMPORT_REVERSE, target_type=AuditTarget.DRAWER
    )
    held = {row.target_id: row.before for row in rows}
    assert len(held) == 3
    assert held[str(original.uuid)]["content"] == original.content
    assert [m["entity"] for m in held[str(original.uuid)]["mentions"]] == ["PostgreSQL"]
    assert [link["older"] for link in held[str(typo.uuid)]["links"]] == [str(original.uuid)]
    assert len({row.batch for row in rows}) == 1
