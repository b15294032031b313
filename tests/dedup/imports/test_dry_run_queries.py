"""A dry run checks a file's records a chunk at a time, as an import writes them: the rooms the
records name, the installation's key and the records' old ids are read once a chunk, so what a
record costs is its own check (its id's replay and its candidates), whatever the file's size."""

import json
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dedup import imports, services
from palace.models import Drawer, Import

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).parent / "fixtures"

# What one record's check asks the store, its room known: whether its id was written before,
# and its candidates (the write path's one round trip).
QUERIES_A_RECORD = 2


def mempalace_file(path: Path, count: int, room: str = "notes") -> Path:
    lines = [
        {
            "id": f"r{index}",
            "document": f"Record {index} of the file, about nothing in particular {index * 7}.",
            "metadata": {"wing": "w", "room": room},
        }
        for index in range(count)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def dry_run_queries(path: Path) -> int:
    with CaptureQueriesContext(connection) as queries:
        tally = imports.import_run(Import(source="x", format="mempalace"), path=path, dry_run=True)
    assert tally.created == tally.records
    return len(queries)


def test_a_record_more_costs_its_own_check_only(tmp_path):
    services.drawer_write_in(wing="w", room="notes", content="The room exists already.")
    ten = dry_run_queries(mempalace_file(tmp_path / "ten.jsonl", 10))
    forty = dry_run_queries(mempalace_file(tmp_path / "forty.jsonl", 40))
    assert forty - ten <= 30 * QUERIES_A_RECORD


def test_a_dry_run_into_rooms_not_made_yet_asks_once_a_chunk(tmp_path):
    ten = dry_run_queries(mempalace_file(tmp_path / "ten.jsonl", 10, room="new"))
    forty = dry_run_queries(mempalace_file(tmp_path / "forty.jsonl", 40, room="new"))
    assert forty - ten <= 30 * QUERIES_A_RECORD
    assert not Drawer.objects.exists()


def test_its_refusals_are_the_imports_in_file_order():
    checked = imports.import_run(
        Import(source="x", format="mempalace"), path=FIXTURES / "mempalace", dry_run=True
    )
    imported = imports.import_create(source="x", format="mempalace")
    written = imports.import_run(imported, path=FIXTURES / "mempalace")
    assert [(e["file"], e["line"]) for e in checked.errors] == [
        (e["file"], e["line"]) for e in written.errors
    ]


def test_it_writes_as_the_import_would_its_agent_included(tmp_path):
    """An agent key's import writes every record as its own agent, the named one kept in the
    source; the dry run checked each as its named agent, and refused one the write takes."""
    line = {
        "id": "r1",
        "document": "A record whose agent no write would take.",
        "metadata": {"wing": "w", "room": "notes", "added_by": "a" * 300},
    }
    path = tmp_path / "agent.jsonl"
    path.write_text(json.dumps(line) + "\n")
    options = {"source": "x", "format": "mempalace", "agent": "scout", "agent_only": True}
    checked = imports.import_run(imports.import_create(**options), path=path, dry_run=True)
    written = imports.import_run(imports.import_create(**options), path=path)
    assert (checked.created, checked.errors) == (written.created, written.errors) == (1, [])
