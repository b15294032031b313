"""Imports of each format from small fixture files written for these tests, their malformed
records, re-imports that store nothing, dry runs, and reversal."""

import json
from pathlib import Path

import pytest

from dedup import imports, services
from palace.models import AuditAction, AuditEntry, Drawer, DrawerLink, Import

FIXTURES = Path(__file__).parent / "fixtures"
pytestmark = pytest.mark.django_db


def run(path: Path, format: str, **options) -> tuple[Import, imports.Tally]:
    imported = imports.import_create(source=str(path), format=format, **options)
    return imported, imports.import_run(imported, path=path)


def test_mempalace_tree():
    imported, tally = run(FIXTURES / "mempalace", "mempalace")
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
    drawer = Drawer.objects.get(uuid=imports.client_id("mempalace", "ops", "mp-1"))
    assert (drawer.room.wing.name, drawer.room.name) == ("ops", "databases")
    assert drawer.agent == "miner"
    assert drawer.source["metadata"]["source_file"] == "notes/db.md"
    assert imported.drawers.count() == 3
    assert imported.links.count() == 1
    imported.refresh_from_db()
    assert imported.status == Import.Status.DONE
    assert imported.summary == tally.summary()


def test_mem0_export():
    _, tally = run(FIXTURES / "mem0.json", "mem0")
    assert tally.summary() == {
        "files": 1,
        "records": 4,
        "created": 3,
        "exact": 1,
        "similar": 0,
        "malformed": 3,
    }
    assert [e["line"] for e in tally.errors] == [5, 6, 7]
    tea = Drawer.objects.get(uuid=imports.client_id("mem0", "alice", "m0-a"))
    assert (tea.room.wing.name, tea.room.name) == ("alice", "preferences")
    build = Drawer.objects.get(uuid=imports.client_id("mem0", "builder", "m0-d"))
    assert (build.room.wing.name, build.room.name, build.agent) == ("builder", "general", "builder")


def test_generic_jsonl_with_a_mapping():
    mapping = {"id": "uid", "content": "text", "wing": "meta.project", "room": "meta.topic"}
    _, tally = run(FIXTURES / "generic.jsonl", "jsonl", mapping=mapping)
    assert tally.summary() == {
        "files": 1,
        "records": 3,
        "created": 2,
        "exact": 1,
        "similar": 0,
        "malformed": 2,
    }
    assert [e["line"] for e in tally.errors] == [3, 5]
    refunds = Drawer.objects.get(uuid=imports.client_id("jsonl", "finance", "4"))
    assert (refunds.room.wing.name, refunds.room.name) == ("finance", "general")


@pytest.mark.parametrize(
    ("path", "format", "options"),
    [
        ("mempalace", "mempalace", {}),
        ("mem0.json", "mem0", {}),
        (
            "generic.jsonl",
            "jsonl",
            {"mapping": {"id": "uid", "content": "text", "wing": "meta.project"}},
        ),
    ],
)
def test_importing_the_same_file_again_stores_nothing(path, format, options):
    _, first = run(FIXTURES / path, format, **options)
    drawers, links = Drawer.objects.count(), DrawerLink.objects.count()
    again, second = run(FIXTURES / path, format, **options)
    assert second.created == 0
    assert second.exact == first.records
    assert Drawer.objects.count() == drawers
    assert DrawerLink.objects.count() == links
    assert again.drawers.count() == 0


def test_a_wing_given_files_everything_there():
    run(FIXTURES / "mem0.json", "mem0", wing="imported")
    assert set(Drawer.objects.values_list("room__wing__name", flat=True)) == {"imported"}


def test_a_dry_run_writes_nothing():
    """Each record is checked against the store as it is: the file's own copies are not seen."""
    imported = Import(source="x", format="mempalace")
    tally = imports.import_run(imported, path=FIXTURES / "mempalace", dry_run=True)
    assert tally.created == 4
    assert len(tally.errors) == 3
    assert Drawer.objects.count() == 0
    assert Import.objects.count() == 0


def test_a_dry_run_of_an_imported_file_would_store_nothing():
    run(FIXTURES / "mempalace", "mempalace")
    drawers = Drawer.objects.count()
    tally = imports.import_run(
        Import(source="x", format="mempalace"), path=FIXTURES / "mempalace", dry_run=True
    )
    assert tally.created == 0
    assert tally.exact == 4
    assert Drawer.objects.count() == drawers


def test_reversal_removes_exactly_what_the_import_stored():
    before = services.drawer_write_in(wing="ops", room="databases", content="Kept from before.")
    imported, _ = run(FIXTURES / "mempalace", "mempalace")
    reversal = imports.import_reverse(imported=imported)
    assert len(reversal.removed) == 3
    assert reversal.links_removed == 1
    assert reversal.kept == []
    assert list(Drawer.objects.all()) == [before.drawer]
    imported.refresh_from_db()
    assert imported.status == Import.Status.REVERSED
    assert AuditEntry.objects.filter(action=AuditAction.IMPORT_REVERSE).count() == 4


def test_reversal_keeps_drawers_built_on_since_and_says_why():
    imported, _ = run(FIXTURES / "mem0.json", "mem0")
    later = services.drawer_write_in(
        wing="alice", room="general", content="Is allergic to peanutss."
    )
    assert later.links
    reversal = imports.import_reverse(imported=imported)
    peanuts = str(imports.client_id("mem0", "alice", "m0-c"))
    assert reversal.kept == [{"drawer": peanuts, "reasons": ["a later drawer links to it"]}]
    assert len(reversal.removed) == 2
    assert set(Drawer.objects.values_list("uuid", flat=True)) == {
        later.drawer.uuid,
        imports.client_id("mem0", "alice", "m0-c"),
    }


def test_a_reversed_import_is_not_reversed_twice():
    imported, _ = run(FIXTURES / "mem0.json", "mem0")
    imports.import_reverse(imported=imported)
    with pytest.raises(Exception, match="reversed already"):
        imports.import_reverse(imported=imported)


def test_a_reversed_import_can_be_imported_again():
    imported, first = run(FIXTURES / "mem0.json", "mem0")
    imports.import_reverse(imported=imported)
    _, again = run(FIXTURES / "mem0.json", "mem0")
    assert again.created == first.created


def test_the_admin_lists_and_reverses_imports(admin_client):
    imported, _ = run(FIXTURES / "mem0.json", "mem0")
    assert admin_client.get(f"/admin/palace/import/{imported.pk}/change/").status_code == 200
    response = admin_client.post(
        "/admin/palace/import/",
        {"action": "reverse", "_selected_action": [imported.pk]},
    )
    assert response.status_code == 302
    assert Drawer.objects.count() == 0


@pytest.mark.parametrize(
    ("format", "line", "field"),
    [
        ("mempalace", {"id": "1", "document": "Backups run nightly."}, "metadata.wing"),
        (
            "mempalace",
            {"id": "1", "document": "Backups run nightly.", "metadata": {}},
            "metadata.wing",
        ),
        ("jsonl", {"id": "1", "content": "Backups run nightly."}, "wing"),
        ("castellan", {"type": "drawer", "id": "1", "content": "Backups.", "room": "r"}, "wing"),
    ],
    ids=["mempalace without metadata", "mempalace without a wing", "jsonl", "castellan"],
)
def test_a_record_without_a_wing_says_where_one_goes(tmp_path, format, line, field):
    """An operator's trial: MemPalace records without `metadata.wing` were each refused as
    "missing wing", naming neither the field nor the way to file them all in one wing."""
    path = tmp_path / "export.jsonl"
    path.write_text(json.dumps(line) + "\n")
    _, tally = run(path, format)
    (error,) = tally.errors
    assert error["error"] == (
        f"missing {field}: give each record one, or file them all in one wing "
        "(import_memories --wing; an API import's wing)"
    )


def test_a_mem0_memory_of_no_user_or_agent_says_where_a_wing_goes(tmp_path):
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps({"results": [{"id": "1", "memory": "Backups run nightly."}]}))
    _, tally = run(path, "mem0")
    (error,) = tally.errors
    assert error["error"].startswith("neither user_id nor agent_id: give each record one, or")
