"""A room moved to another wing took its drawers' supersessions with it, so one made before the
move could span two wings (a key of one was shown a drawer id it cannot read, which
`supersede_across_wings` refuses to make). A move that would leave one so is refused, in the
admin's form and in the service; rooms joined by supersessions move together
(`rooms_move`, the room list's action), each audited."""

import pytest
from django.db import connection

from dedup import services
from dedup.errors import Conflict
from palace.models import AuditAction, AuditEntry, Drawer, Room, Wing
from tests.races import race_codes

pytestmark = pytest.mark.django_db


@pytest.fixture
def archive(dedup_settings) -> Wing:
    return Wing.objects.create(name="archive")


def write(wing: str, room: str, content: str) -> Drawer:
    return services.drawer_write_in(wing=wing, room=room, content=content).drawer


def superseded_across_rooms() -> tuple[Drawer, Drawer]:
    """ops/backups' drawer superseded by one of ops/restores."""
    old = write("ops", "backups", "Backups run at two every night.")
    new = write("ops", "restores", "Backups now run at three, after the restore test.")
    services.drawer_supersede(drawer=old, by=new)
    return old, new


def room(wing: str, name: str) -> Room:
    return Room.objects.get(wing__name=wing, name=name)


def test_moving_the_superseded_drawers_room_alone_is_refused(archive):
    old, _ = superseded_across_rooms()
    with pytest.raises(Conflict) as refused:
        services.room_change(room=old.room, name="backups", wing=archive)
    assert refused.value.code == "room_move_splits_supersessions"
    assert refused.value.details["rooms"] == ["ops/restores"]
    assert room("ops", "backups").pk == old.room_id
    assert not AuditEntry.objects.filter(action=AuditAction.ROOM_MOVE).exists()


def test_moving_the_replacing_drawers_room_alone_is_refused(archive):
    _, new = superseded_across_rooms()
    with pytest.raises(Conflict) as refused:
        services.room_change(room=new.room, name="restores", wing=archive)
    assert refused.value.details["rooms"] == ["ops/backups"]


def test_a_rename_in_its_wing_is_not_a_move(archive):
    old, _ = superseded_across_rooms()
    services.room_change(room=old.room, name="nightly", wing=old.room.wing)
    assert room("ops", "nightly").pk == old.room_id


def test_a_supersession_inside_the_room_moves_with_it(archive):
    old = write("ops", "backups", "Backups run at two every night.")
    new = write("ops", "backups", "Backups now run at three, after the restore test.")
    services.drawer_supersede(drawer=old, by=new)
    services.room_change(room=old.room, name="backups", wing=archive)
    assert room("archive", "backups").pk == old.room_id


def test_rooms_joined_by_a_supersession_move_together(archive):
    old, new = superseded_across_rooms()
    moved = services.rooms_move(rooms=[old.room, new.room], wing=archive)
    assert [r.name for r in moved] == ["backups", "restores"]
    assert set(Room.objects.filter(wing=archive).values_list("name", flat=True)) == {
        "backups",
        "restores",
    }
    moves = AuditEntry.objects.filter(action=AuditAction.ROOM_MOVE).order_by("pk")
    assert [(e.before, e.after) for e in moves] == [
        ({"wing": "ops", "name": "backups"}, {"wing": "archive", "name": "backups"}),
        ({"wing": "ops", "name": "restores"}, {"wing": "archive", "name": "restores"}),
    ]


def test_moving_rooms_together_still_refuses_a_room_left_behind(archive):
    old, new = superseded_across_rooms()
    third = write("ops", "runbooks", "Restores are tested every Friday.")
    services.drawer_supersede(drawer=new, by=third)
    with pytest.raises(Conflict) as refused:
        services.rooms_move(rooms=[old.room, new.room], wing=archive)
    assert refused.value.details["rooms"] == ["ops/runbooks"]
    assert not Room.objects.filter(wing=archive).exists()


def test_moving_rooms_of_one_name_into_a_wing_is_refused_whole(archive):
    one = write("ops", "notes", "Ops notes.").room
    other = write("dev", "notes", "Dev notes.").room
    with pytest.raises(Conflict) as refused:
        services.rooms_move(rooms=[one, other], wing=archive)
    assert refused.value.details["names"] == ["notes"]
    assert not Room.objects.filter(wing=archive).exists()


def test_moving_a_room_onto_a_name_the_wing_has_is_refused(archive):
    Room.objects.create(wing=archive, name="notes")
    one = write("ops", "notes", "Ops notes.").room
    with pytest.raises(Conflict):
        services.rooms_move(rooms=[one], wing=archive)
    assert room("ops", "notes").pk == one.pk


def test_the_admins_form_says_why_beside_the_wing(admin_client, archive):
    old, _ = superseded_across_rooms()
    response = admin_client.post(
        f"/admin/palace/room/{old.room_id}/change/", {"wing": archive.pk, "name": "backups"}
    )
    assert response.status_code == 200
    assert "ops/restores" in str(response.context["adminform"].form.errors["wing"])
    assert room("ops", "backups").pk == old.room_id


def test_the_room_lists_action_moves_them_together(admin_client, archive):
    old, new = superseded_across_rooms()
    response = admin_client.post(
        "/admin/palace/room/",
        {
            "action": "move_to_wing",
            "_selected_action": [old.room_id, new.room_id],
            "wing": archive.pk,
        },
        follow=True,
    )
    assert "Moved 2 rooms to archive." in response.content.decode()
    assert Room.objects.filter(wing=archive).count() == 2


def test_the_action_without_a_wing_moves_nothing(admin_client, archive):
    old, _ = superseded_across_rooms()
    response = admin_client.post(
        "/admin/palace/room/",
        {"action": "move_to_wing", "_selected_action": [old.room_id], "wing": ""},
        follow=True,
    )
    assert "Choose the wing to move the rooms to." in response.content.decode()
    assert not Room.objects.filter(wing=archive).exists()


def test_the_actions_refusal_is_a_message(admin_client, archive):
    old, _ = superseded_across_rooms()
    response = admin_client.post(
        "/admin/palace/room/",
        {"action": "move_to_wing", "_selected_action": [old.room_id], "wing": archive.pk},
        follow=True,
    )
    assert "ops/restores" in response.content.decode()
    assert not Room.objects.filter(wing=archive).exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_a_supersession_racing_a_move_never_spans_two_wings(dedup_settings):
    archive = Wing.objects.create(name="archive")
    for round_ in range(20):
        old = write("ops", f"backups-{round_}", f"Round {round_}: backups run at two.")
        new = write("ops", f"restores-{round_}", f"Round {round_}: backups run at three.")
        codes = race_codes(
            lambda old=old, new=new: services.drawer_supersede(drawer=old, by=new),
            lambda room=old.room: services.room_change(room=room, name=room.name, wing=archive),
        )
        old.refresh_from_db()
        wings = dict(
            Room.objects.filter(pk__in=[old.room_id, new.room_id]).values_list("pk", "wing_id")
        )
        spans = old.superseded_by_id is not None and wings[old.room_id] != wings[new.room_id]
        assert not spans, (round_, codes)
        assert sorted(codes) in (
            ["ok", "room_move_splits_supersessions"],
            ["ok", "supersede_across_wings"],
        ), round_
