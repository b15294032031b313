"""A mined chunk's id is derived from its wing's and room's names (`dedup.mining._chunk_ids`).
A wing or room renamed since (by `api/0002` or `api/0003`, giving a stored name the form a
write gives it; by a curator in the admin) mined again from the same files stored every chunk
again under the id its new names derive, and superseded the chunks stored before (no longer
"in" the file). A chunk its room holds under the id a former name of the room or its wing
derives is now recognised: mining again stores nothing and supersedes nothing."""

import unicodedata

import pytest
from django.core.management import call_command

from dedup import mining, services
from dedup.validation import clean_label
from palace.models import Drawer, Room, Wing
from tests.api.test_migrations import made_before, migrate

TEXT = "Backups run nightly at two in the morning.\n\nThey are kept for thirty days."
LONG = "\n\n".join(
    f"Paragraph {n}: " + "the nightly backup is copied offsite. " * 30 for n in range(4)
)
CAFE, CAFE_NFD = "café", unicodedata.normalize("NFD", "café")


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "a.md").write_text(TEXT)
    (tmp_path / "b.md").write_text(LONG)
    return tmp_path


def mine(folder, capsys, wing: str, room: str) -> dict[str, str]:
    capsys.readouterr()
    call_command("mine", str(folder), "--wing", wing, "--room", room, "--no-progress")
    out, _ = capsys.readouterr()
    return dict(line.split(": ") for line in out.strip().splitlines())


def mine_as_before_the_renames(folder, capsys, wing: str, room: str) -> dict[str, str]:
    """Mined as before `api/0002`: a wing and room named as stored (trimmed only)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mining, "place_name", clean_label)
        return mine(folder, capsys, wing, room)


@pytest.mark.django_db(transaction=True)
def test_places_the_migrations_renamed_mined_again_store_nothing(folder, capsys, dedup_settings):
    migrate(("api", "0001_agent_keys"))
    room = made_before(CAFE_NFD, "no\u200btes")
    first = mine_as_before_the_renames(folder, capsys, CAFE_NFD, "no\u200btes")
    stored = set(Drawer.objects.values_list("uuid", flat=True))
    migrate()
    assert str(Room.objects.get()) == f"{CAFE}/notes"

    again = mine(folder, capsys, CAFE, "notes")

    assert int(first["created"]) == len(stored) > 2
    assert again["created"] == "0"
    assert again["unchanged"] == first["created"]
    assert again["superseded"] == "0"
    assert set(Drawer.objects.values_list("uuid", flat=True)) == stored
    assert Drawer.objects.current().filter(room=room).count() == len(stored)
    in_the_old_form = mine(folder, capsys, CAFE_NFD, "no\u200btes")  # finds the renamed room
    assert (in_the_old_form["created"], in_the_old_form["superseded"]) == ("0", "0")


@pytest.mark.django_db
def test_places_a_curator_renamed_and_moved_mined_again_store_nothing(
    folder, capsys, dedup_settings
):
    first = mine(folder, capsys, "docs", "notes")
    stored = set(Drawer.objects.values_list("uuid", flat=True))
    room = Room.objects.get()
    services.wing_rename(wing=room.wing, name="manuals")
    services.room_change(room=room, name="papers", wing=Wing.objects.get(name="manuals"))
    target = services.room_get_or_create(wing="archive", room="x").wing
    services.rooms_move(rooms=[Room.objects.get(name="papers")], wing=target)

    again = mine(folder, capsys, "archive", "papers")

    assert again["created"] == "0"
    assert again["unchanged"] == first["created"]
    assert again["superseded"] == "0"
    assert set(Drawer.objects.values_list("uuid", flat=True)) == stored


@pytest.mark.django_db
def test_a_changed_file_mined_again_after_a_rename_supersedes_what_it_no_longer_says(
    folder, capsys, dedup_settings
):
    mine(folder, capsys, "docs", "notes")
    services.wing_rename(wing=Wing.objects.get(), name="manuals")
    (folder / "a.md").write_text("Backups run nightly at three in the morning.")

    again = mine(folder, capsys, "manuals", "notes")

    assert (again["created"], again["superseded"]) == ("1", "1")
    assert Drawer.objects.current().count() == Drawer.objects.count() - 1


@pytest.mark.django_db
def test_a_wing_s_former_name_mined_again_is_a_new_wing_beside_the_renamed_one(
    folder, capsys, dedup_settings
):
    """A curator renames `docs` to `manuals`; mining `--wing docs` again makes a new wing of
    that name. Its chunks' ids were the ones `manuals` holds (derived from the same names), so
    the run stopped with `drawer_id_taken`; now each takes the next id of its sequence that no
    other room holds, the same at every run, so mining it again is a replay."""
    first = mine(folder, capsys, "docs", "notes")
    stored = set(Drawer.objects.values_list("uuid", flat=True))
    services.wing_rename(wing=Wing.objects.get(), name="manuals")

    beside = mine(folder, capsys, "docs", "notes")
    again = mine(folder, capsys, "docs", "notes")
    renamed = mine(folder, capsys, "manuals", "notes")

    assert beside["created"] == first["created"]
    assert (again["created"], again["unchanged"]) == ("0", first["created"])
    assert again["superseded"] == "0"
    assert (renamed["created"], renamed["superseded"]) == ("0", "0")
    assert (
        set(Drawer.objects.filter(room__wing__name="manuals").values_list("uuid", flat=True))
        == stored
    )
    assert Drawer.objects.current().filter(room__wing__name="docs").count() == len(stored)


@pytest.mark.django_db
def test_a_chunk_a_curator_deleted_is_not_mined_back_and_the_run_goes_on(
    folder, capsys, dedup_settings
):
    """Its id names the deleted drawer for good: mining the file again was refused
    `drawer_id_taken` at that chunk, and every later run stopped there."""
    first = mine(folder, capsys, "docs", "notes")
    deleted = Drawer.objects.order_by("id").first()
    services.drawer_delete(drawer=deleted)

    again = mine(folder, capsys, "docs", "notes")

    assert again["deleted"] == "1"
    assert int(again["unchanged"]) == int(first["created"]) - 1
    assert (again["created"], again["superseded"]) == ("0", "0")
    assert not Drawer.objects.filter(uuid=deleted.uuid).exists()
