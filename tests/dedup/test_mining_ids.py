"""A mined chunk's drawer id (an attacker's trial, of imports first): derived from public facts
alone (wing, room, path, position and text), a key of another wing that knows a document could
write a drawer under a chunk's id first, which stopped the mining run (drawer_id_taken), or ask
whether a wing holds that text. It is keyed now (`dedup.derived_ids`), and mining unchanged files
again still stores nothing, files mined before the upgrade included."""

import hashlib
import uuid

import pytest
from django.core.management import call_command

from dedup import mining, services
from palace.models import Drawer

pytestmark = pytest.mark.django_db

TEXT = "Backups run nightly at two in the morning.\n\nThey are kept for thirty days."


def mine(folder, capsys) -> dict[str, str]:
    call_command("mine", str(folder), "--wing", "docs")
    out, _ = capsys.readouterr()
    return dict(line.split(": ") for line in out.strip().splitlines())


def unkeyed(folder, index: int, chunk: str) -> uuid.UUID:
    """The id a chunk was mined under before ids were keyed."""
    digest = hashlib.sha256(chunk.encode()).hexdigest()
    name = f"docs\x1f{folder.name}\x1fa.md\x1f{index}\x1f{digest}"
    return uuid.uuid5(mining.MINING_NAMESPACE, name)


def mine_before_the_upgrade(folder, capsys) -> dict[str, str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            mining, "derived_id", lambda key, ns, *parts: uuid.uuid5(ns, "\x1f".join(parts))
        )
        return mine(folder, capsys)


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "a.md").write_text(TEXT)
    return tmp_path


def test_a_chunks_id_is_not_computed_from_the_document(folder, capsys, dedup_settings):
    mine(folder, capsys)
    assert Drawer.objects.get().uuid != unkeyed(folder, 0, TEXT)


def test_an_id_taken_first_in_another_wing_does_not_stop_the_run(folder, capsys, dedup_settings):
    taken = unkeyed(folder, 0, TEXT)
    services.drawer_write_in(wing="other", room="r", content="Taken first.", drawer_id=taken)
    counts = mine(folder, capsys)
    assert counts["created"] == "1"


def test_files_mined_before_the_upgrade_mined_again_store_nothing(folder, capsys, dedup_settings):
    mine_before_the_upgrade(folder, capsys)
    counts = mine(folder, capsys)
    assert (counts["created"], counts["unchanged"]) == ("0", "1")


def test_nor_supersede_what_they_still_say(folder, capsys, dedup_settings):
    mine_before_the_upgrade(folder, capsys)
    counts = mine(folder, capsys)
    assert counts["superseded"] == "0"
    assert Drawer.objects.current().get().uuid == unkeyed(folder, 0, TEXT)
