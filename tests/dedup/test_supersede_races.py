"""A supersession racing a DELETE of its replacement, and two drawers superseding each other at
once, with real threads and connections (PostgreSQL only, like the other race tests). The
replacing drawer is held and read again inside the transaction: a deleted one is 404
`drawer_not_found` (never an IntegrityError at commit, a 500), and of two drawers naming each
other one supersedes and the other hears `drawer_not_current` (never a cycle)."""

import pytest
from django.db import connection

from dedup import services
from palace.models import Drawer
from tests.races import race_codes as race

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL"
    ),
]

ROUNDS = 15


def two_drawers(round_: int) -> tuple[Drawer, Drawer]:
    room = services.room_get_or_create(wing="sup", room=f"r{round_}")
    old = services.drawer_write(room=room, content=f"Round {round_}: the gateway is 10.0.0.1.")
    new = services.drawer_write(room=room, content=f"Round {round_}: it moved to 10.0.0.2 in May.")
    return old.drawer, new.drawer


def test_a_supersession_racing_the_delete_of_its_replacement(dedup_settings):
    for round_ in range(ROUNDS):
        old, new = two_drawers(round_)
        outcomes = race(
            lambda old=old, new=new: services.drawer_supersede(drawer=old, by=new),
            lambda new=new: services.drawer_delete(drawer=new),
        )
        assert outcomes[1] == "ok", round_
        assert outcomes[0] in ("ok", "drawer_not_found"), round_
        old.refresh_from_db()
        assert old.superseded_by_id is None, round_  # deleted with it, or never set
        assert (old.valid_to is None) == (outcomes[0] == "drawer_not_found"), round_


def test_two_drawers_superseding_each_other_at_once(dedup_settings):
    for round_ in range(ROUNDS):
        first, second = two_drawers(round_)
        outcomes = race(
            lambda a=first, b=second: services.drawer_supersede(drawer=a, by=b),
            lambda a=first, b=second: services.drawer_supersede(drawer=b, by=a),
        )
        assert sorted(outcomes) == ["drawer_not_current", "ok"], round_
        assert Drawer.objects.current().filter(pk__in=(first.pk, second.pk)).count() == 1, round_
