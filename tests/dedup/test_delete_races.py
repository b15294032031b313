"""A DELETE of a drawer that supersedes a lower-id drawer, racing a revert or a decision that
holds both, with real threads and connections (PostgreSQL only, like the other race tests).

Deleting the superseder sets the superseded drawer's `superseded_by` to null (Django's SET_NULL),
an UPDATE of the lower-id drawer. The deletion took that row lock after its own drawer's, while
a revert of the merge (or a decision on the pair's link) holds the pair in id order, the lower
first: each waited for the other, PostgreSQL broke the deadlock, and the client heard 503
`database_busy` (8 rounds in 10 over HTTP). Now the deletion holds the drawers it will update
in id order with its own, before it: one of the two waits for the other, and each answers."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from dedup import services
from dedup.locks import rows_held
from dedup.services import drawer_changes
from palace.models import Drawer, DrawerLink
from review import services as review
from tests.races import race_codes as race
from tests.review.lock_waits import in_thread, wait_until_blocked

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL"
    ),
]

ROUNDS = 20


def linked_pair(round_: int, label: str) -> tuple[Drawer, Drawer, DrawerLink]:
    """Two near variants in a new room: the older (lower id), the newer, and the newer's link."""
    room = services.room_get_or_create(wing="races", room=f"{label}-{round_}")
    text = f"Round {round_}: the cache layer expires session tokens after thirty idle minutes."
    older = services.drawer_write(room=room, content=text).drawer
    written = services.drawer_write(room=room, content=text.replace("expires", "expirs"))
    (link,) = written.links
    assert older.pk < written.drawer.pk
    return older, written.drawer, link


def test_a_revert_of_a_merge_racing_the_delete_of_the_kept_newer_drawer(dedup_settings, curator):
    for round_ in range(ROUNDS):
        older, newer, link = linked_pair(round_, "merge")
        merge = review.decide(
            item=f"d{link.pk}", action="merge", canonical=str(newer.uuid), actor=curator
        )
        older.refresh_from_db()
        assert older.superseded_by_id == newer.pk, round_
        outcomes = race(
            lambda pk=merge.pk: review.revert(decision=pk, actor=curator),
            lambda newer=newer: services.drawer_delete(drawer=newer),
        )
        # The revert before the deletion, or after it: the merged-away drawer is current again
        # either way (a revert after it restores what it can and says the kept drawer is gone).
        assert outcomes[1] == "ok", (round_, outcomes)
        assert outcomes[0] in ("ok", "revert_target_deleted"), (round_, outcomes)
        assert not Drawer.objects.filter(pk=newer.pk).exists(), round_
        older.refresh_from_db()
        assert older.superseded_by_id is None, round_


def test_a_decision_on_a_link_racing_the_delete_of_the_drawer_superseding_the_other(
    dedup_settings, curator
):
    for round_ in range(ROUNDS):
        older, newer, link = linked_pair(round_, "decide")
        services.drawer_supersede(drawer=older, by=newer)
        outcomes = race(
            lambda pk=link.pk: review.decide(item=f"d{pk}", action="dismiss", actor=curator),
            lambda newer=newer: services.drawer_delete(drawer=newer),
        )
        assert outcomes[1] == "ok", (round_, outcomes)
        # Decided first (then deleted with its drawer), or found gone.
        assert outcomes[0] in ("ok", "item_not_found"), (round_, outcomes)
        older.refresh_from_db()
        assert older.superseded_by_id is None, round_
        assert older.valid_to is not None, round_  # still superseded: its superseder is gone


def test_deleting_a_drawer_that_supersedes_drawers_on_both_sides_of_its_id(dedup_settings):
    """The drawers it supersedes, below and above it, are held in id order with it; each is
    left superseded, its `superseded_by` null."""
    room = services.room_get_or_create(wing="races", room="both-sides")
    low, middle, high = (
        services.drawer_write(room=room, content=text).drawer
        for text in (
            "The nightly backup runs at two and keeps seven days of snapshots.",
            "Deploys are frozen from the twentieth of December to the second of January.",
            "The on-call rotation changes every Monday at nine in the morning.",
        )
    )
    services.drawer_supersede(drawer=low, by=middle)
    services.drawer_supersede(drawer=high, by=middle)
    services.drawer_delete(drawer=middle)
    for drawer in (low, high):
        drawer.refresh_from_db()
        assert drawer.superseded_by_id is None
        assert drawer.valid_to is not None


def test_the_deletion_waits_at_the_lower_drawer_it_supersedes_holding_nothing_yet(dedup_settings):
    """The race made certain: a holder of the lower drawer (as a revert or a decision holds it,
    first) makes the deletion wait there, before it holds its own drawer, so the holder then
    takes the deleted drawer without waiting. Before, the deletion held its drawer first and
    waited at the lower one: the holder's next lock closed the cycle."""
    older, newer, _ = linked_pair(0, "order")
    services.drawer_supersede(drawer=older, by=newer)
    errors: list[BaseException] = []
    with transaction.atomic():
        rows_held(Drawer, [older.pk])
        deletion = in_thread(lambda: services.drawer_delete(drawer=newer), errors)
        assert wait_until_blocked(deletion)
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '3s'")
        assert set(rows_held(Drawer, [older.pk, newer.pk])) == {older.pk, newer.pk}
    deletion.join(timeout=30)
    assert errors == []
    assert not Drawer.objects.filter(pk=newer.pk).exists()
    older.refresh_from_db()
    assert older.superseded_by_id is None


def test_a_supersession_committed_while_the_deletion_waits_is_held_before_it(
    dedup_settings, monkeypatch
):
    """A drawer below comes to be superseded by the deleted one while the deletion waits for it:
    read again once held, it is new below, and the deletion starts again holding it first."""
    other_room = services.room_get_or_create(wing="races", room="meanwhile-other")
    lower = services.drawer_write(room=other_room, content="Unrelated: the printer is on floor 3.")
    lower = lower.drawer
    newer = linked_pair(0, "meanwhile")[1]
    assert lower.pk < newer.pk
    attempts: list[dict[int, str]] = []
    holding = drawer_changes._delete_holding

    def counted(drawer, around, actor, *, last):
        attempts.append(dict(around))
        return holding(drawer, around, actor, last=last)

    monkeypatch.setattr(drawer_changes, "_delete_holding", counted)
    errors: list[BaseException] = []
    with transaction.atomic():
        held = rows_held(Drawer, [lower.pk, newer.pk])  # as `drawer_supersede` holds them
        deletion = in_thread(lambda: services.drawer_delete(drawer=newer), errors)
        assert wait_until_blocked(deletion)
        held[lower.pk].valid_to = held[newer.pk].created_at
        held[lower.pk].superseded_by = held[newer.pk]
        held[lower.pk].save(update_fields=["valid_to", "superseded_by"])
    deletion.join(timeout=30)
    assert errors == []
    assert len(attempts) == 2  # started again, holding the drawer below first
    assert attempts[1][lower.pk] == drawer_changes.NO_KEY_UPDATE
    lower.refresh_from_db()
    assert lower.superseded_by_id is None
    assert lower.valid_to is not None
