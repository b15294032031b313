"""Exports: Castellan's JSONL round-trips, MemPalace's JSONL reads back as MemPalace's format,
and the commands."""

import json
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command

from dedup import imports, services
from dedup.imports import formats
from dedup.imports.ids import client_id
from palace.models import Drawer, Entity, Import

pytestmark = pytest.mark.django_db


def seed() -> None:
    first = services.drawer_write_in(
        wing="ops",
        room="db",
        content="The staging database runs on port 5433.",
        source={"file": "notes/db.md"},
        kind="fact",
    )
    services.drawer_write_in(
        wing="ops", room="db", content="The staging databse runs on port 5433."
    )
    named = services.drawer_write_in(
        wing="ops", room="people", content="Ada owns the deploys.", name="owner"
    )
    old = services.drawer_write_in(wing="home", room="garden", content="Water the roses weekly.")
    services.drawer_supersede(drawer=old.drawer)
    services.mention_add(drawer=first.drawer, name="PostgreSQL", kind="technology")
    services.mention_add(drawer=named.drawer, name="Ada Lovelace", kind="person")
    services.entity_alias_add(entity=Entity.objects.get(name="Ada Lovelace"), alias="Ada")


def export(**options) -> list[dict]:
    return [json.loads(line) for line in imports.export_lines(**options)]


def without_ids(lines: list[dict], drawer_ids: dict[str, str]) -> list[dict]:
    """The lines with drawer ids mapped and entity ids dropped: what the format regenerates."""
    kept = []
    for line in lines:
        line = dict(line)
        for key in ("id", "newer", "older", "drawer", "superseded_by"):
            if line.get(key) and (line["type"] != "entity" or key != "id"):
                line[key] = drawer_ids.get(line[key], line[key])
        if line["type"] == "entity":
            line.pop("id")
        if line["type"] == "mention":
            line.pop("entity")
        kept.append(line)
    return kept


def test_castellan_jsonl_round_trips(tmp_path, django_db_blocker):
    seed()
    first = export()
    assert {line["type"] for line in first} == {"drawer", "link", "entity", "mention"}
    out = tmp_path / "castellan.jsonl"
    call_command("export_memories", str(out), "--format", "castellan")
    # An empty database: everything the export holds comes from the file.
    Drawer.objects.all().delete()
    Entity.objects.all().delete()
    imported = imports.import_create(source=str(out), format="castellan")
    tally = imports.import_run(imported, path=out)
    assert tally.errors == []
    assert tally.created == 4
    second = export()
    regenerated = {
        line["id"]: str(imports.client_id("castellan", line["wing"], line["id"]))
        for line in first
        if line["type"] == "drawer"
    }
    assert without_ids(first, regenerated) == without_ids(second, {})


def test_a_wing_export_holds_only_that_wing():
    seed()
    lines = export(wing="home")
    assert [(line["type"], line["content"]) for line in lines] == [
        ("drawer", "Water the roses weekly.")
    ]


def test_mempalace_export_reads_as_mempalace_jsonl(tmp_path):
    seed()
    out = tmp_path / "mempalace.jsonl"
    call_command("export_memories", str(out), "--format", "mempalace")
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 3  # current drawers only
    for line in lines:
        assert set(line) == {"id", "document", "metadata"}
        assert {"wing", "room", "source_file", "filed_at", "added_by"} <= set(line["metadata"])
        uuid.UUID(line["id"])
    assert lines[0]["metadata"]["source_file"] == "notes/db.md"
    records = list(formats.read_mempalace(out))
    assert all(isinstance(record, formats.Record) for record in records)
    assert [r.content for r in records] == [line["document"] for line in lines]


def test_the_import_command_prints_the_summary_and_the_malformed_lines(capsys):
    fixtures = Path(__file__).parent / "fixtures"
    call_command(
        "import_memories",
        str(fixtures / "generic.jsonl"),
        "--format",
        "jsonl",
        "--map",
        "id=uid",
        "--map",
        "content=text",
        "--map",
        "wing=meta.project",
        "--no-progress",
    )
    result = json.loads(capsys.readouterr().out)
    assert result["summary"]["created"] == 2
    assert [e["line"] for e in result["malformed"]] == [3, 5]
    assert Import.objects.get(pk=result["import"]).drawers.count() == 2
    call_command("import_reverse", str(result["import"]))
    assert json.loads(capsys.readouterr().out)["links_removed"] == 0
    assert Drawer.objects.count() == 0


def test_the_import_command_dry_run_writes_nothing(capsys):
    fixtures = Path(__file__).parent / "fixtures"
    call_command(
        "import_memories",
        str(fixtures / "mem0.json"),
        "--format",
        "mem0",
        "--dry-run",
        "--no-progress",
    )
    assert json.loads(capsys.readouterr().out)["summary"]["records"] == 4
    assert Drawer.objects.count() == 0
    assert Import.objects.count() == 0


def test_an_export_imported_back_into_its_store_keeps_its_mentions(tmp_path):
    """Its drawers are exact copies of the store's, stored as nothing new; the file's mentions
    name them by the file's ids, and reach the drawers that hold them."""
    seed()
    typo = Drawer.objects.get(content="The staging databse runs on port 5433.")
    services.mention_add(drawer=typo, name="Staging", kind="environment")
    out = tmp_path / "castellan.jsonl"
    out.write_text("".join(line + "\n" for line in imports.export_lines()))
    Entity.objects.filter(name="Staging").delete()  # its mention goes with it
    imported = imports.import_create(source=str(out), format="castellan")
    tally = imports.import_run(imported, path=out)
    assert tally.errors == []
    assert tally.created == 1  # the superseded drawer: a write never matches one
    staging = Entity.objects.get(name="Staging")
    assert list(staging.mentions.values_list("drawer", flat=True)) == [typo.pk]
    assert list(imported.mentions.values_list("entity__name", flat=True)) == ["Staging"]


def test_a_mention_of_a_drawer_nowhere_is_refused_in_words(tmp_path):
    out = tmp_path / "castellan.jsonl"
    lines = [
        {"type": "mention", "drawer": "d9", "name": "PostgreSQL", "kind": "technology"},
        {"type": "mention", "name": "PostgreSQL", "kind": "technology"},
    ]
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    imported = imports.import_create(source=str(out), format="castellan")
    tally = imports.import_run(imported, path=out)
    assert [error["error"] for error in tally.errors] == [
        "The mention's drawer 'd9' is neither in the file nor in the store.",
        "missing 'drawer'",
    ]


def castellan_run(tmp_path, lines: list[dict]):
    out = tmp_path / "castellan.jsonl"
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    imported = imports.import_create(source=str(out), format="castellan")
    return imports.import_run(imported, path=out)


def test_a_line_of_no_known_type_is_malformed_and_links_and_decisions_are_left(tmp_path):
    tally = castellan_run(
        tmp_path,
        [
            {"type": "bogus", "id": "x"},
            {"id": "y", "content": "No type at all."},
            {"type": "link", "newer": "a", "older": "b"},
            {"type": "decision", "action": "review.merge"},
        ],
    )
    assert [(e["line"], e["error"]) for e in tally.errors] == [
        (1, "type must be one of drawer, link, entity, mention, decision"),
        (2, "type must be one of drawer, link, entity, mention, decision"),
    ]


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("valid_from", "garbage", "valid_from is not an ISO 8601 date and time"),
        ("valid_to", "9999-99-99T00:00:00", "valid_to is not an ISO 8601 date and time"),
        ("valid_to", 5, "valid_to is not an ISO 8601 date and time"),
        ("superseded_by", 5, "superseded_by is not a drawer id"),
        ("superseded_by", " ", "superseded_by is not a drawer id"),
    ],
)
def test_a_drawer_of_a_validity_no_one_set_is_malformed_and_stores_nothing(
    tmp_path, field, value, error
):
    drawer = {"type": "drawer", "id": "d1", "wing": "w", "room": "r", "content": "A fact."}
    tally = castellan_run(tmp_path, [{**drawer, field: value}])
    assert [e["error"] for e in tally.errors] == [error]
    assert not Drawer.objects.exists()


def test_a_drawer_superseded_as_exported_is_superseded_again(tmp_path):
    drawer = {"type": "drawer", "wing": "w", "room": "r"}
    tally = castellan_run(
        tmp_path,
        [
            {**drawer, "id": "d1", "content": "Old fact.", "valid_to": "2026-01-02T03:04:05+00:00"},
            {**drawer, "id": "d2", "content": "New fact.", "valid_from": "2026-01-02"},
        ],
    )
    assert tally.errors == []
    old = Drawer.objects.get(content="Old fact.")
    assert old.valid_to.isoformat() == "2026-01-02T03:04:05+00:00"


def test_a_mention_of_a_drawer_in_a_wing_the_import_does_not_write_says_so(tmp_path):
    """An earlier import stored drawer 'x' in wing a; this file writes to wing b only, so its
    mention of 'x' does not reach it, and the refusal says where it looked."""
    room = services.room_get_or_create(wing="a", room="r")
    services.drawer_write(
        room=room, content="Deploys run on Fridays.", drawer_id=client_id("castellan", "a", "x")
    )
    out = tmp_path / "castellan.jsonl"
    lines = [
        {"type": "drawer", "id": "d1", "wing": "b", "room": "r", "content": "Backups at two."},
        {"type": "mention", "drawer": "x", "name": "PostgreSQL", "kind": "technology"},
    ]
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    imported = imports.import_create(source=str(out), format="castellan", wings={"b"})
    tally = imports.import_run(imported, path=out)
    assert [error["error"] for error in tally.errors] == [
        "The mention's drawer 'x' is neither in the file nor in the wings this import writes to."
    ]
