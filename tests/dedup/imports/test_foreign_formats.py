"""Our exports read back the way the other stores' importers read them, and their exports (as
their documentation and code define them) import here.

MemPalace's importer (`mempalace/importer.py`, `import_palace`) takes a directory, reads every
`*.jsonl` under it (recursively, sorted), and for each non-blank line requires a JSON object
whose `id` is a non-empty string and whose `document` is a string; `metadata` must be an object
(anything else is discarded whole) whose values are scalars (str, int, float, bool: any other
value, None included, is dropped and counted in `metadata_dropped`); an id seen before in the
run is skipped. `mempalace_importer_reads` below applies those rules (written here from their
description, not copied), so an export that passes it is one MemPalace files without a loss.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from dedup import imports, services
from palace.models import Drawer, Room, Wing

pytestmark = pytest.mark.django_db

SCALARS = (str, int, float, bool)


def mempalace_importer_reads(directory: Path) -> dict[str, Any]:
    """What MemPalace's importer would file from `directory`, and what it would count as lost."""
    if not directory.is_dir():
        raise ValueError("MemPalace imports a directory")
    filed: dict[str, tuple[str, dict[str, Any]]] = {}
    stats = {"files": 0, "malformed": 0, "metadata_dropped": 0}
    for path in sorted(directory.glob("**/*.jsonl")):
        stats["files"] += 1
        for raw in path.read_text(encoding="utf-8").splitlines():
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except ValueError:
                stats["malformed"] += 1
                continue
            if not isinstance(obj, dict):
                stats["malformed"] += 1
                continue
            drawer_id, document = obj.get("id"), obj.get("document")
            if not isinstance(drawer_id, str) or not drawer_id or not isinstance(document, str):
                stats["malformed"] += 1
                continue
            metadata = obj.get("metadata")
            if not isinstance(metadata, dict):
                stats["metadata_dropped"] += metadata is not None
                metadata = {}
            kept = {k: v for k, v in metadata.items() if isinstance(v, SCALARS)}
            stats["metadata_dropped"] += len(metadata) - len(kept)
            filed.setdefault(drawer_id, (document, kept))
    return {**stats, "drawers": filed}


def seed() -> None:
    # A room named before new ones were refused a '/', which is no path component as it is.
    Room.objects.create(wing=Wing.objects.create(name="ops"), name="db/primary")
    services.drawer_write_in(
        wing="ops",
        room="db/primary",
        content="The staging database runs on port 5433.",
        source={"file": "notes/db.md", "metadata": {"tags": ["db", "staging"], "gone": None}},
    )
    services.drawer_write_in(wing="ops", room="deploys", content="Deploys go out on Tuesdays.")
    services.drawer_write_in(wing="home", room="garden", content="Water the roses weekly.")


def test_a_mempalace_tree_export_is_filed_by_mempalaces_importer_without_a_loss(tmp_path):
    seed()
    out = tmp_path / "export"
    call_command("export_memories", f"{out}/", "--format", "mempalace")
    read = mempalace_importer_reads(out)
    assert (read["files"], read["malformed"], read["metadata_dropped"]) == (3, 0, 0)
    drawers = read["drawers"]
    assert set(drawers) == {str(uuid) for uuid in Drawer.objects.values_list("uuid", flat=True)}
    for drawer in Drawer.objects.select_related("room__wing"):
        document, metadata = drawers[str(drawer.uuid)]
        assert document == drawer.content
        assert (metadata["wing"], metadata["room"]) == (drawer.room.wing.name, drawer.room.name)
    manifest = json.loads((out / "export-manifest.json").read_text())
    assert manifest == {"format_version": 1, "wings": 2, "rooms": 3, "drawers": 3}


def test_metadata_mempalace_cannot_hold_is_kept_as_json_text(tmp_path):
    seed()
    call_command("export_memories", str(tmp_path), "--format", "mempalace")
    staging = Drawer.objects.get(content__startswith="The staging")
    _, metadata = mempalace_importer_reads(tmp_path)["drawers"][str(staging.uuid)]
    assert json.loads(metadata["tags"]) == ["db", "staging"]
    assert "gone" not in metadata
    assert (tmp_path / "ops" / "db_primary.jsonl").exists()


def test_a_mempalace_tree_export_imports_back_as_the_same_drawers(tmp_path):
    seed()
    call_command("export_memories", str(tmp_path), "--format", "mempalace")
    exported = {d.uuid: (d.room.wing.name, d.room.name, d.content) for d in Drawer.objects.all()}
    Drawer.objects.all().delete()
    imported = imports.import_create(source=str(tmp_path), format="mempalace")
    tally = imports.import_run(imported, path=tmp_path)
    assert tally.errors == []
    assert {(d.room.wing.name, d.room.name, d.content) for d in Drawer.objects.all()} == set(
        exported.values()
    )


def test_mem0_platform_memories_file_into_their_first_category(tmp_path):
    """`get_all` on mem0's platform: `categories` on each memory, `metadata` often null."""
    path = tmp_path / "memories.json"
    memory = {
        "id": "0b8f5f3c-0000-4000-8000-000000000001",
        "memory": "Leads the API redesign, aiming for a second-quarter launch.",
        "user_id": "carl",
        "agent_id": None,
        "run_id": None,
        "metadata": None,
        "categories": ["professional_details", "work"],
        "created_at": "2025-05-01T09:00:00-07:00",
        "updated_at": "2025-05-02T09:00:00-07:00",
    }
    path.write_text(json.dumps({"count": 1, "next": None, "previous": None, "results": [memory]}))
    imported = imports.import_create(source=str(path), format="mem0")
    tally = imports.import_run(imported, path=path)
    assert tally.created == 1
    drawer = Drawer.objects.get()
    assert (drawer.room.wing.name, drawer.room.name) == ("carl", "professional_details")
    assert drawer.source["categories"] == ["professional_details", "work"]
    assert drawer.source["updated_at"] == "2025-05-02T09:00:00-07:00"
