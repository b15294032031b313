"""A room moved to another wing took its drawers' supersessions with it, so one made before the
move could span two wings (a key of one was shown a drawer id it cannot read, which
`supersede_across_wings` refuses to make). A move that would leave one so is refused, in the
admin's form and in the service; rooms joined by supersessions move together
(`rooms_move`, the room list's action), each audited."""

import json
import threading

import pytest
from django.db import connection, connections

from dedup import imports, services
from dedup.errors import Conflict
from dedup.services import rooms
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
            "wing": "archive",
        },
        follow=True,
    )
    assert "Moved 2 rooms to archive." in response.content.decode()
    assert Room.objects.filter(wing=archive).count() == 2


def test_the_action_finds_the_wing_as_a_write_names_it(admin_client, archive):
    plain = write("ops", "notes", "Ops notes.").room
    response = admin_client.post(
        "/admin/palace/room/",
        {"action": "move_to_wing", "_selected_action": [plain.pk], "wing": " archive\ufe0f"},
        follow=True,
    )
    assert "Moved 1 room to archive." in response.content.decode()
    assert room("archive", "notes").pk == plain.pk


@pytest.mark.parametrize("wing", ["", "nowhere", "arch\u200bive!"], ids=["none", "unknown", "odd"])
def test_the_action_into_no_wing_moves_nothing(admin_client, archive, wing):
    plain = write("ops", "notes", "Ops notes.").room
    response = admin_client.post(
        "/admin/palace/room/",
        {"action": "move_to_wing", "_selected_action": [plain.pk], "wing": wing},
        follow=True,
    )
    assert "Name a wing that exists to move the rooms to." in response.content.decode()
    assert room("ops", "notes").pk == plain.pk


def test_the_actions_refusal_is_a_message(admin_client, archive):
    old, _ = superseded_across_rooms()
    response = admin_client.post(
        "/admin/palace/room/",
        {"action": "move_to_wing", "_selected_action": [old.room_id], "wing": "archive"},
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


def both(*works):
    """Each work's ("ok", result) or (error type, first line), each in its own thread and
    connection; anything but a domain error would be a 500."""
    results: list = [None] * len(works)

    def one(index, work):
        try:
            results[index] = ("ok", work())
        except Exception as error:
            results[index] = (type(error).__name__, str(error).splitlines()[0])
        finally:
            connections.close_all()

    threads = [threading.Thread(target=one, args=item) for item in enumerate(works)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_opposite_moves_between_two_wings_never_deadlock(dedup_settings, monkeypatch):
    """Each move held its rooms' wings FOR UPDATE (a join locked), and the other's foreign key
    needed one of them at commit: a deadlock (a review's reproduction)."""
    a = services.room_get_or_create(wing="one", room="a")
    b = services.room_get_or_create(wing="two", room="b")
    one, two = Wing.objects.get(name="one"), Wing.objects.get(name="two")
    barrier = threading.Barrier(2, timeout=20)
    real = rooms.refuse_splitting_supersessions

    def after_the_row_locks(held, wing):
        barrier.wait()  # both hold their rooms
        return real(held, wing)

    monkeypatch.setattr(rooms, "refuse_splitting_supersessions", after_the_row_locks)
    results = both(
        lambda: services.rooms_move(rooms=[a], wing=two),
        lambda: services.rooms_move(rooms=[b], wing=one),
    )
    assert [result[0] for result in results] == ["ok", "ok"], results
    assert (room("two", "a").pk, room("one", "b").pk) == (a.pk, b.pk)


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_a_reversal_leaves_the_wing_a_room_is_moving_into(dedup_settings, tmp_path, monkeypatch):
    """An import's reversal removed the empty wing it had made while a room moved into it, and
    the move failed its foreign key at commit (a 500; a review's reproduction)."""
    path = tmp_path / "export.jsonl"
    record = {"id": "1", "document": "Fact one.", "metadata": {"wing": "alice", "room": "health"}}
    path.write_text(json.dumps(record) + "\n")
    imported = imports.import_create(source=str(path), format="mempalace")
    imports.import_run(imported, path=path)
    notes = services.room_get_or_create(wing="bob", room="notes")
    alice = Wing.objects.get(name="alice")
    moved, go_on = threading.Event(), threading.Event()
    real_change = rooms._change

    def change_then_wait(*arguments):
        real_change(*arguments)
        moved.set()
        go_on.wait(timeout=20)  # moved, not committed

    monkeypatch.setattr(rooms, "_change", change_then_wait)

    def reverse():
        assert moved.wait(timeout=20)
        try:
            return imports.import_reverse(imported=imported)
        finally:
            go_on.set()

    results = both(lambda: services.room_change(room=notes, name="notes", wing=alice), reverse)
    assert [result[0] for result in results] == ["ok", "ok"], results
    assert room("alice", "notes").pk == notes.pk
