"""Issue 13, defect 8: renaming a wing, renaming a room or moving it to another wing in the admin
writes an audit row (through a service, in the same transaction); sweeps and their proposals can
be read in the admin."""

import pytest

from dedup import services
from dedup.errors import Conflict
from palace.models import AuditEntry, Room, Wing
from review.services import sweeps

pytestmark = pytest.mark.django_db


def wing_form(wing, rooms, **changes):
    data = {
        "name": wing.name,
        "rooms-TOTAL_FORMS": len(rooms),
        "rooms-INITIAL_FORMS": len(rooms),
        "rooms-MIN_NUM_FORMS": 0,
        "rooms-MAX_NUM_FORMS": 1000,
    }
    for index, room in enumerate(rooms):
        data |= {f"rooms-{index}-id": room.pk, f"rooms-{index}-wing": wing.pk}
        data[f"rooms-{index}-name"] = room.name
    return data | changes


def test_renaming_a_wing_in_the_admin_is_audited(admin_client, room):
    wing = room.wing
    response = admin_client.post(
        f"/admin/palace/wing/{wing.pk}/change/", wing_form(wing, [room], name="operations")
    )
    assert response.status_code == 302
    assert Wing.objects.get(pk=wing.pk).name == "operations"
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.target_type, entry.target_id) == (
        "wing.rename",
        "wing",
        str(wing.pk),
    )
    assert (entry.before, entry.after) == ({"name": "ops"}, {"name": "operations"})
    assert entry.actor_label == "admin"


def test_renaming_a_room_in_the_wings_inline_is_audited(admin_client, room):
    wing = room.wing
    data = wing_form(wing, [room], **{"rooms-0-name": "restores"})
    assert admin_client.post(f"/admin/palace/wing/{wing.pk}/change/", data).status_code == 302
    entry = AuditEntry.objects.get()
    assert entry.action == "room.rename"
    assert entry.after == {"wing": "ops", "name": "restores"}


def test_moving_a_room_to_another_wing_in_the_admin_is_audited(admin_client, room):
    elsewhere = Wing.objects.create(name="archive")
    response = admin_client.post(
        f"/admin/palace/room/{room.pk}/change/", {"wing": elsewhere.pk, "name": "backups"}
    )
    assert response.status_code == 302
    assert Room.objects.get(pk=room.pk).wing == elsewhere
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.target_type) == ("room.move", "room")
    assert entry.before == {"wing": "ops", "name": "backups"}
    assert entry.after == {"wing": "archive", "name": "backups"}


def test_saving_unchanged_writes_no_audit_row(admin_client, room):
    admin_client.post(
        f"/admin/palace/room/{room.pk}/change/", {"wing": room.wing.pk, "name": "backups"}
    )
    assert not AuditEntry.objects.exists()


def test_a_rename_onto_a_taken_name_changes_nothing(room):
    taken = services.room_get_or_create(wing="ops", room="restores")
    with pytest.raises(Conflict):
        services.room_change(room=room, name="restores", wing=taken.wing)
    assert Room.objects.get(pk=room.pk).name == "backups"
    assert not AuditEntry.objects.exists()


def test_sweeps_and_proposals_are_readable_in_the_admin(admin_client, room):
    services.drawer_write(room=room, content="Backups run nightly and are kept for thirty days.")
    run = sweeps.execute(sweeps.start(threshold=0.9))
    assert admin_client.get("/admin/review/sweeprun/").status_code == 200
    assert admin_client.get(f"/admin/review/sweeprun/{run.pk}/change/").status_code == 200
    assert admin_client.get("/admin/review/proposal/").status_code == 200
    assert admin_client.get(f"/admin/review/sweeprun/{run.pk}/delete/").status_code == 403
