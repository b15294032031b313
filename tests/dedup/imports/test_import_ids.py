"""An import's drawer ids (an attacker's trial): derived from a record's format and id alone, a key
of another wing could compute them, write a drawer under one before the import did (which then
refused the record, drawer_id_taken), and learn whether a wing had imported a given record. They
are keyed with the installation's key and scoped to the record's wing now (`dedup.imports.ids`),
and importing the same file into the same wing again still stores nothing, a store imported
under the old ids included."""

import json
import uuid
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dedup import imports, services
from dedup.derived_ids import DRAWER_IDS
from dedup.imports import ids
from palace.models import Drawer, Import, InstallationKey, Mention

pytestmark = pytest.mark.django_db
WHEN = "2025-01-01T00:00:00+00:00"
DEPLOYS = "Deploys run on Tuesdays."


def drawer_line(id: str, content: str, **fields) -> dict:
    return {"type": "drawer", "id": id, "wing": "w", "room": "r", "content": content, **fields}


LINES = [
    drawer_line("a", DEPLOYS),
    drawer_line("b", "Staging runs on 5432.", valid_to=WHEN, superseded_by="c"),
    drawer_line("c", "Staging moved to 5433."),
    {"type": "mention", "drawer": "a", "name": "Ada", "kind": "person"},
]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return castellan(tmp_path / "file.jsonl", *LINES)


def castellan(path: Path, *lines: dict) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def run(path: Path, *, dry_run: bool = False, **options) -> tuple[Import, imports.Tally]:
    imported = imports.import_create(source=str(path), format="castellan", **options)
    return imported, imports.import_run(imported, path=path, dry_run=dry_run)


def run_before_the_upgrade(path: Path) -> Import:
    """The import as it ran when a record's id was uuid5 of `<format>:<source id>`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ids, "client_id", lambda f, wing, s, key=None: ids.legacy_client_id(f, s))
        imported, tally = run(path)
    assert tally.errors == []
    return imported


def test_the_id_changes_with_the_installations_key():
    first = imports.client_id("castellan", "w", "a")
    InstallationKey.objects.filter(purpose=DRAWER_IDS).update(value="another installation")
    assert imports.client_id("castellan", "w", "a") != first


def test_the_id_stays_when_secret_key_is_rotated(settings):
    first = imports.client_id("castellan", "w", "a")
    settings.SECRET_KEY = "rotated-after-a-leak"
    assert imports.client_id("castellan", "w", "a") == first


def test_the_id_is_the_wings():
    assert imports.client_id("castellan", "w", "a") != imports.client_id("castellan", "v", "a")


def test_the_migrations_make_the_key():
    assert InstallationKey.objects.filter(purpose=DRAWER_IDS).exists()


def test_a_database_without_the_key_makes_it_once():
    InstallationKey.objects.all().delete()
    first = imports.client_id("castellan", "w", "a")
    assert imports.client_id("castellan", "w", "a") == first
    assert InstallationKey.objects.count() == 1


def test_an_id_taken_first_in_another_wing_does_not_refuse_the_record(path):
    """Whatever the other wing's key computes from the file (the old id, or the wing's with no
    key), the import writes under another."""
    for name in ("castellan:a", "castellan:w:a", "castellan\x1fw\x1fa"):
        services.drawer_write_in(
            wing="other",
            room="r",
            content="Taken first.",
            drawer_id=uuid.uuid5(imports.IMPORT_NAMESPACE, name),
        )
    _, tally = run(path)
    assert tally.errors == []
    assert tally.created == 3


def test_a_record_another_wing_imported_is_stored_not_refused(path):
    """Refused, it told the second import's key that the first wing holds the record."""
    run(path, wing="first")
    _, tally = run(path, wing="second")
    assert tally.errors == []
    assert tally.created == 3


def test_the_same_file_into_the_same_wing_again_stores_nothing(path):
    run(path)
    _, tally = run(path)
    assert tally.errors == []
    assert (tally.created, tally.exact) == (0, 3)
    assert Drawer.objects.count() == 3


def test_a_file_imported_before_the_upgrade_stores_nothing_imported_again(path):
    run_before_the_upgrade(path)
    _, tally = run(path)
    assert tally.errors == []
    assert (tally.created, tally.exact) == (0, 3)


def test_its_superseded_drawer_is_not_stored_again(path):
    """No exact copy of a superseded drawer is ever found: only its old id replays it."""
    run_before_the_upgrade(path)
    run(path)
    assert Drawer.objects.filter(content="Staging runs on 5432.").count() == 1


def test_its_mention_reaches_the_drawer_as_before(path):
    run_before_the_upgrade(path)
    run(path)
    assert Mention.objects.get().drawer.content == DEPLOYS


def test_a_drawer_deleted_before_the_upgrade_is_not_imported_again(path):
    """As before the upgrade: a deleted drawer's id is not used again, so its record is
    refused, not stored anew."""
    run_before_the_upgrade(path)
    services.drawer_delete(drawer=Drawer.objects.get(content=DEPLOYS))
    _, tally = run(path)
    assert not Drawer.objects.filter(content=DEPLOYS).exists()
    assert [error["line"] for error in tally.errors] == [1, 4]  # and its mention


def test_a_dry_run_after_the_upgrade_would_store_nothing(path):
    run_before_the_upgrade(path)
    _, tally = run(path, dry_run=True)
    assert tally.created == 0


def test_an_import_made_before_the_upgrade_still_reverses_whole(path):
    old = run_before_the_upgrade(path)
    reversal = imports.import_reverse(imported=old)
    assert len(reversal.removed) == 3
    assert not Drawer.objects.exists()


def test_it_and_its_replay_after_the_upgrade_reverse_to_an_empty_store(path):
    old = run_before_the_upgrade(path)
    new, _ = run(path)
    imports.import_reverse(imported=old)  # hands its drawers to the import that found them
    imports.import_reverse(imported=new)
    assert not Drawer.objects.exists()


def test_a_later_files_mention_finds_a_drawer_imported_before_the_upgrade(path, tmp_path):
    run_before_the_upgrade(path)
    mention = {"type": "mention", "drawer": "c", "name": "Staging", "kind": "tool"}
    _, tally = run(castellan(tmp_path / "later.jsonl", mention), wings={"w"})
    assert tally.errors == []
    assert Mention.objects.get(entity__name="Staging").drawer.content == "Staging moved to 5433."


def test_a_later_files_mentions_read_the_key_once(path, tmp_path):
    run(path)
    mentions = [
        {"type": "mention", "drawer": drawer, "name": name, "kind": "tool"}
        for drawer in ("a", "c")
        for name in ("Staging", "Deploys", "Postgres")
    ]
    with CaptureQueriesContext(connection) as queries:
        _, tally = run(castellan(tmp_path / "later.jsonl", *mentions), wings={"w"})
    assert tally.errors == []
    reads = [q["sql"] for q in queries.captured_queries if "palace_installationkey" in q["sql"]]
    assert len(reads) == 1
