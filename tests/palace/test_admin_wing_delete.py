"""Deleting a wing in the admin (its own page, or the list's action) goes through `wing_delete`:
audited (`wing.delete`, as a room's deletion is `room.delete`), and a wing a room was made in
meanwhile is refused with a message, never a 500 (the rooms' foreign key protects the wing)."""

import threading
import time

import pytest
from django.contrib.admin.models import LogEntry
from django.db import connection, connections, transaction

from dedup import services
from dedup.admin.palace import WingAdmin
from dedup.errors import Conflict, NotFound
from dedup.locks import hold_locks, lock_key
from palace.models import AuditEntry, Wing

pytestmark = pytest.mark.django_db


@pytest.fixture
def empty_wing(room):
    """The wing ops, its one room deleted: empty."""
    services.room_delete(room=room)
    return Wing.objects.get(name="ops")


def test_an_empty_wing_deleted_on_its_page_is_audited(admin_client, empty_wing, admin_user):
    response = admin_client.post(f"/admin/palace/wing/{empty_wing.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Wing.objects.filter(pk=empty_wing.pk).exists()
    assert LogEntry.objects.get(object_id=str(empty_wing.pk)).is_deletion()
    entry = AuditEntry.objects.get(action="wing.delete")
    assert (entry.actor, entry.target_type, entry.target_id, entry.before, entry.after) == (
        admin_user,
        "wing",
        str(empty_wing.pk),
        {"name": "ops"},
        None,
    )


def test_the_lists_action_audits_each_wing(admin_client, empty_wing):
    other = Wing.objects.create(name="travel")
    response = admin_client.post(
        "/admin/palace/wing/",
        {
            "action": "delete_selected",
            "_selected_action": [empty_wing.pk, other.pk],
            "post": "yes",
        },
    )
    assert response.status_code == 302
    assert not Wing.objects.exists()
    deleted = AuditEntry.objects.filter(action="wing.delete").order_by("target_id")
    assert [entry.before for entry in deleted] == [{"name": "ops"}, {"name": "travel"}]
    assert LogEntry.objects.filter(action_flag=3).count() == 2


def test_a_room_made_meanwhile_refuses_the_deletion_with_a_message(
    admin_client, empty_wing, monkeypatch
):
    """A room is made after the admin's own check of protected rows (its confirmation page
    lists a wing's rooms as protected), before the deletion: said, not a 500."""
    monkeypatch.setattr(
        WingAdmin, "get_deleted_objects", lambda self, objs, request: ([], {}, set(), [])
    )
    services.room_get_or_create(wing="ops", room="notes")
    response = admin_client.post(
        f"/admin/palace/wing/{empty_wing.pk}/delete/", {"post": "yes"}, follow=True
    )
    shown = [str(m) for m in response.context["messages"]]
    assert shown == ["Wing ops: ops has rooms: delete or move them first."]
    assert Wing.objects.filter(pk=empty_wing.pk).exists()
    assert not AuditEntry.objects.filter(action="wing.delete").exists()
    assert not LogEntry.objects.filter(object_id=str(empty_wing.pk)).exists()


def test_the_service_refuses_a_wing_holding_rooms(room):
    with pytest.raises(Conflict) as refused:
        services.wing_delete(wing=room.wing)
    assert refused.value.code == "wing_not_empty"
    assert Wing.objects.filter(pk=room.wing.pk).exists()
    assert not AuditEntry.objects.filter(action="wing.delete").exists()


def test_the_service_says_a_wing_deleted_already(empty_wing):
    services.wing_delete(wing=empty_wing)
    with pytest.raises(NotFound) as refused:
        services.wing_delete(wing=empty_wing)
    assert refused.value.code == "wing_not_found"
    assert AuditEntry.objects.filter(action="wing.delete").count() == 1


def test_a_write_after_the_deletion_makes_the_wing_again(empty_wing):
    services.wing_delete(wing=empty_wing)
    room = services.room_get_or_create(wing="ops", room="notes")
    assert room.wing.pk != empty_wing.pk
    assert room.wing.name == "ops"


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_a_deletion_waits_for_a_room_being_made_and_refuses(dedup_settings):
    """A write making a room in the wing holds the wing's lock (`rooms_get_or_create`): the
    deletion waits for it, then finds the room, rather than deleting the wing under it."""
    wing = Wing.objects.create(name="ops")
    holding, refused = threading.Event(), []

    def delete() -> None:
        try:
            holding.wait(timeout=30)
            services.wing_delete(wing=wing)
        except Conflict as refusal:
            refused.append(refusal.code)
        finally:
            connections.close_all()

    deleter = threading.Thread(target=delete)
    deleter.start()
    try:
        with transaction.atomic():
            hold_locks([lock_key("wing", "ops")])  # as `rooms_get_or_create` takes it
            holding.set()
            time.sleep(0.3)  # the deletion waits on it meanwhile
            services.room_get_or_create(wing="ops", room="notes")
    finally:
        holding.set()
        deleter.join(timeout=30)
    assert refused == ["wing_not_empty"]
    assert str(Wing.objects.get().rooms.get()) == "ops/notes"
