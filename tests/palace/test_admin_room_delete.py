"""Deleting a room in the admin (its own page, or the wing's inline) goes through `room_delete`:
audited, and a room a drawer was written into meanwhile is refused with a message, never a 500
(the drawers' foreign key protects the room)."""

import pytest
from django.contrib.admin.models import LogEntry

from dedup import services
from dedup.admin.palace import RoomAdmin
from dedup.errors import Conflict
from palace.models import AuditEntry, Room
from tests.palace.test_admin_audit import wing_form

pytestmark = pytest.mark.django_db


def test_an_empty_room_deleted_on_its_page_is_audited(admin_client, room, admin_user):
    response = admin_client.post(f"/admin/palace/room/{room.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Room.objects.filter(pk=room.pk).exists()
    assert LogEntry.objects.get(object_id=str(room.pk)).is_deletion()
    entry = AuditEntry.objects.get(action="room.delete")
    assert (entry.actor, entry.target_id, entry.before) == (
        admin_user,
        str(room.pk),
        {"wing": "ops", "name": "backups"},
    )


def test_a_drawer_written_meanwhile_refuses_the_deletion_with_a_message(
    admin_client, room, monkeypatch
):
    """A drawer lands after the admin's own check of protected rows (its confirmation page
    lists a room holding drawers as protected), before the deletion: said, not a 500."""
    monkeypatch.setattr(
        RoomAdmin, "get_deleted_objects", lambda self, objs, request: ([], {}, set(), [])
    )
    services.drawer_write(room=room, content="The backups run nightly at two.")
    response = admin_client.post(
        f"/admin/palace/room/{room.pk}/delete/", {"post": "yes"}, follow=True
    )
    shown = [str(m) for m in response.context["messages"]]
    assert shown == ["Room ops/backups: ops/backups holds drawers: delete or move them first."]
    assert Room.objects.filter(pk=room.pk).exists()
    assert not AuditEntry.objects.filter(action="room.delete").exists()
    assert not LogEntry.objects.filter(object_id=str(room.pk)).exists()  # not logged deleted


def test_a_room_deleted_in_the_wings_inline_is_audited(admin_client, room):
    wing = room.wing
    data = wing_form(wing, [room], **{"rooms-0-DELETE": "on"})
    response = admin_client.post(f"/admin/palace/wing/{wing.pk}/change/", data)
    assert response.status_code == 302
    assert not Room.objects.filter(pk=room.pk).exists()
    assert AuditEntry.objects.filter(action="room.delete").count() == 1


def test_the_service_refuses_a_room_holding_drawers(room):
    services.drawer_write(room=room, content="The backups run nightly at two.")
    with pytest.raises(Conflict) as refused:
        services.room_delete(room=room)
    assert refused.value.code == "room_not_empty"
