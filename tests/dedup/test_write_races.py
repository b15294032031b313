"""Requests that race on the same rows, repeated enough to hit the window: checkpoints holding the
same texts or new wings in opposite order, DELETEs of one drawer, and a DELETE racing a write that
links to the drawer or a mention on it. Real threads and real connections, so PostgreSQL only
(SQLite's IMMEDIATE transactions serialise every writer; its in-memory test database cannot show
it across threads). A service call that raises anything but a domain error would be a 500."""

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, connections
from rest_framework.test import APIClient

from api.models import ALL_WINGS, RIGHTS, AgentKey
from dedup import services
from dedup.errors import DomainError
from dedup.services import drawers as drawer_writes
from palace.models import AuditEntry, Drawer, DrawerLink, Mention, Wing
from tests.races import race

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL"
    ),
]

ROUNDS = 20
TEXT = "The staging database is rebuilt from the nightly snapshot every morning at six."
VARIANT = "The staging database is rebuilt from the nightly snapshot every morning at six!"


def checkpoint(key: str, *items: tuple[str, str]) -> Callable[[], Any]:
    batch = [
        services.CheckpointItem(
            content=content, destination=services.Destination.PROJECT, agent="ada", wing=wing
        )
        for wing, content in items
    ]
    return lambda: services.checkpoint_write(key=key, items=batch)


def test_checkpoints_holding_the_same_texts_in_opposite_order_never_deadlock(dedup_settings):
    for round_ in range(ROUNDS):
        first = ("ops", f"Round {round_}: the deploy runbook lives in the operations wiki.")
        second = ("ops", f"Round {round_}: rotate the signing keys before the audit in March.")
        results = race(
            checkpoint(f"a-{round_}", first, second), checkpoint(f"b-{round_}", second, first)
        )
        stored = [result["stored"] for result, _ in results]
        assert sorted(stored) == [0, 2], round_
        assert sorted(result["duplicates"] for result, _ in results) == [0, 2], round_
    assert Drawer.objects.count() == 2 * ROUNDS


def test_checkpoints_creating_the_same_new_wings_in_opposite_order_never_deadlock(
    dedup_settings,
):
    for round_ in range(ROUNDS):
        wings = (f"east-{round_}", f"west-{round_}")
        results = race(
            checkpoint(f"a-{round_}", (wings[0], "Alpha one."), (wings[1], "Alpha two.")),
            checkpoint(f"b-{round_}", (wings[1], "Beta one."), (wings[0], "Beta two.")),
        )
        assert [result["stored"] for result, _ in results] == [2, 2], round_
        assert Wing.objects.filter(name__in=wings).count() == 2
    assert Drawer.objects.count() == 4 * ROUNDS


@pytest.fixture
def token(user):
    """An agent key that may delete in every wing."""
    return AgentKey.objects.issue(agent=user.username, wings=(ALL_WINGS,), rights=RIGHTS)[1]


def delete_request(token: str, drawer_id: object) -> Callable[[], int]:
    def delete() -> int:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        return client.delete(f"/api/drawers/{drawer_id}").status_code

    return delete


def test_concurrent_deletes_of_one_drawer_delete_it_once(dedup_settings, token):
    room = services.room_get_or_create(wing="race", room="deletes")
    for round_ in range(ROUNDS // 2):
        drawer = services.drawer_write(room=room, content=f"{TEXT} ({round_})").drawer
        statuses = race(*[delete_request(token, drawer.uuid)] * 6)
        assert sorted(statuses) == [204] + [404] * 5, round_
        deletes = AuditEntry.objects.filter(action="drawer.delete", target_id=str(drawer.uuid))
        assert deletes.count() == 1, round_


def test_a_delete_racing_a_write_that_links_to_the_drawer_loses_nothing(dedup_settings):
    for round_ in range(ROUNDS):
        room = services.room_get_or_create(wing="race", room=f"link-{round_}")
        older = services.drawer_write(room=room, content=TEXT).drawer
        deleted, written = race(
            lambda: services.drawer_delete(drawer=older),  # noqa: B023 - run within the round
            lambda: services.drawer_write(room=room, content=VARIANT),  # noqa: B023
        )
        assert deleted is None, round_
        assert written.created, round_
        assert Drawer.objects.filter(pk=written.drawer.pk).exists(), round_
        assert not Drawer.objects.filter(pk=older.pk).exists(), round_
        assert not DrawerLink.objects.filter(older_id=older.pk).exists(), round_
        assert {link.older_id for link in written.links} <= {older.pk}, round_


def test_a_delete_racing_an_exact_copy_keeps_the_memory_or_answers_the_copy(dedup_settings):
    for round_ in range(ROUNDS):
        room = services.room_get_or_create(wing="race", room=f"copy-{round_}")
        older = services.drawer_write(room=room, content=TEXT).drawer
        deleted, written = race(
            lambda: services.drawer_delete(drawer=older),  # noqa: B023 - run within the round
            lambda: services.drawer_write(room=room, content=TEXT),  # noqa: B023
        )
        assert deleted is None, round_
        if written.created:  # the copy was gone: the memory is stored again
            assert Drawer.objects.filter(pk=written.drawer.pk, content=TEXT).exists(), round_
        else:  # the copy answered first, then was deleted
            assert written.drawer.pk == older.pk, round_


def test_a_delete_racing_a_mention_on_the_drawer_answers_404_or_records_it(dedup_settings):
    for round_ in range(ROUNDS):
        room = services.room_get_or_create(wing="race", room=f"mention-{round_}")
        drawer = services.drawer_write(room=room, content=TEXT).drawer
        deleted, mentioned = race(
            lambda: services.drawer_delete(drawer=drawer),  # noqa: B023 - run within the round
            lambda: services.mention_add(drawer=drawer, name="Grace Hopper", kind="person"),  # noqa: B023
        )
        assert deleted is None, round_
        if isinstance(mentioned, DomainError):
            assert (mentioned.status, mentioned.code) == (404, "drawer_not_found"), round_
        else:
            assert mentioned.created, round_
        assert not Mention.objects.filter(drawer_id=drawer.pk).exists(), round_


def test_a_copy_superseded_after_the_candidates_were_read_is_not_the_exact_copy(monkeypatch):
    # The supersession commits between the write's candidates (the copy current) and its hold.
    original = services.drawer_write_in(wing="ops", room="dev", content=TEXT).drawer
    hold = drawer_writes.drawer_held

    def superseded_first(drawer_id: int) -> Any:
        race(lambda: services.drawer_supersede(drawer=original))  # its own connection, committed
        return hold(drawer_id)

    monkeypatch.setattr(drawer_writes, "drawer_held", superseded_first)
    result = services.drawer_write_in(wing="ops", room="dev", content=TEXT)
    assert result.created
    assert Drawer.objects.current().filter(content=TEXT).count() == 1


def test_near_variants_written_at_once_are_linked():
    # Each round two near variants of a new text, written together into a room that exists.
    services.drawer_write_in(wing="ops", room="dev", content="The room exists before the race.")
    unlinked = 0
    for round_ in range(ROUNDS):
        first, second = (f"{text} Round {round_}." for text in (TEXT, VARIANT))
        race(write_into_dev(first), write_into_dev(second))
        unlinked += not DrawerLink.objects.filter(newer__content__in=[first, second]).exists()
    assert unlinked == 0


def write_into_dev(content: str) -> Callable[[], Any]:
    return lambda: services.drawer_write_in(wing="ops", room="dev", content=content)


def test_a_named_write_racing_the_drawers_deletion_is_no_500(monkeypatch):
    """The same named drawer written again (a restatement) while a curator deletes it: the write
    read it unlocked (`earlier_drawer`) and its DrawerRestatement failed the foreign key at
    commit, a 500; now it holds the drawer first and, finding it gone, stores the memory."""
    first = services.drawer_write_in(wing="w", room="r", content="Port 5433.", name="db-port")
    read = threading.Event()
    deleted = threading.Event()
    original = drawer_writes.earlier_drawer

    def earlier_then_wait(**kwargs):
        found = original(**kwargs)
        read.set()
        deleted.wait(10)
        return found

    monkeypatch.setattr(drawer_writes, "earlier_drawer", earlier_then_wait)
    outcome = {}

    def write():
        try:
            outcome["write"] = services.drawer_write_in(
                wing="w", room="r", content="Port 5433.", name="db-port"
            )
        except Exception as error:
            outcome["write"] = error
        finally:
            connections.close_all()

    thread = threading.Thread(target=write)
    thread.start()
    assert read.wait(10)
    services.drawer_delete(drawer=Drawer.objects.get(pk=first.drawer.pk))
    deleted.set()
    thread.join(20)
    assert not isinstance(outcome["write"], Exception), repr(outcome["write"])
    assert outcome["write"].created is True  # the deleted one gone, this write stores it
    assert Drawer.objects.filter(name="db-port").count() == 1
