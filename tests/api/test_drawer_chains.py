"""A drawer merged into one merged away since (C into B, then B into A), or superseded twice,
says which current drawer stands for it: `current`, the end of its superseded_by chain, where
superseded_by names B, itself not current (the concurrency trial). Redirects resolve to the
canonical item (../shared/spec, merge with provenance); a list finds them all in one query."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dedup import services as write
from palace.models import Drawer, DrawerLink
from review import services

pytestmark = pytest.mark.django_db
TEXT = "The staging database listens on port 5432 behind the bastion host in eu-west-1."


def merge(kept: Drawer, other: Drawer, curator) -> None:
    """The curator's merge of the link between the two, keeping `kept`."""
    link = DrawerLink.objects.get(older_id=min(kept.pk, other.pk), newer_id=max(kept.pk, other.pk))
    services.decide(item=f"d{link.pk}", action="merge", actor=curator, canonical=str(kept.uuid))


@pytest.fixture
def chain(curator, dedup_settings) -> tuple[Drawer, Drawer, Drawer]:
    """Near-identical drawers a, b, c: c merged into b, then b into a."""
    room = write.room_get_or_create(wing="ops", room="dev")
    a, b, c = (
        write.drawer_write(room=room, content=text).drawer
        for text in (TEXT, TEXT.replace("host", "hosts"), TEXT.replace("listens", "listen"))
    )
    merge(b, c, curator)
    merge(a, b, curator)
    return a, b, c


def test_a_drawer_merged_into_one_merged_since_stands_for_the_last(api, chain):
    a, b, c = chain
    shown = api.get(f"/api/drawers/{c.uuid}").json()
    assert shown["superseded_by"] == str(b.uuid)
    assert shown["current"] == str(a.uuid)


def test_a_current_drawer_stands_for_itself(api, chain):
    a, _, _ = chain
    assert api.get(f"/api/drawers/{a.uuid}").json()["current"] == str(a.uuid)


def test_a_fact_superseded_twice_stands_for_the_last(api, dedup_settings):
    room = write.room_get_or_create(wing="ops", room="facts")
    v1, v2, v3 = (
        write.drawer_write(room=room, content=f"The release train leaves on day {n}.").drawer
        for n in (1, 2, 3)
    )
    write.drawer_supersede(drawer=v1, by=v2)
    write.drawer_supersede(drawer=v2, by=v3)
    assert api.get(f"/api/drawers/{v1.uuid}").json()["current"] == str(v3.uuid)


def test_a_drawer_retired_without_a_successor_stands_for_none(api, dedup_settings):
    room = write.room_get_or_create(wing="ops", room="facts")
    gone = write.drawer_write(room=room, content="The old VPN is at vpn.example.org.").drawer
    write.drawer_supersede(drawer=gone, by=None)
    assert api.get(f"/api/drawers/{gone.uuid}").json()["current"] is None


def test_a_list_finds_them_in_one_query(api, chain):
    a = chain[0]
    with CaptureQueriesContext(connection) as one_page:
        shown = api.get("/api/wings/ops/rooms/dev/drawers?all=true").json()["results"]
    assert {d["id"]: d["current"] for d in shown} == {str(d.uuid): str(a.uuid) for d in chain}
    chains = [q for q in one_page.captured_queries if "RECURSIVE" in q["sql"]]
    assert len(chains) == 1


def test_a_page_of_superseded_drawers_costs_the_queries_of_one(api, dedup_settings):
    """Their `current` in one query for the page, listed or nested in mentions (the review:
    each nested drawer's was a query of its own)."""
    room = write.room_get_or_create(wing="ops", room="facts")
    successor = write.drawer_write(room=room, content="The release train leaves on day 99.").drawer

    def supersede(start: int, stop: int) -> None:
        for n in range(start, stop):
            text = f"Release {n} is cut by Ana Lima on the {n}th."
            drawer = write.drawer_write(room=room, content=text).drawer
            write.mention_add(drawer=drawer, name="Ana Lima", kind="person")
            write.drawer_supersede(drawer=drawer, by=successor)

    def pages() -> dict[str, int]:
        entity = api.get("/api/entities?name=Ana%20Lima").json()["results"][0]["id"]
        counted = {}
        for path in (
            f"/api/entities/{entity}/mentions",
            "/api/wings/ops/rooms/facts/drawers?all=1",
        ):
            with CaptureQueriesContext(connection) as captured:
                shown = api.get(path).json()["results"]
            counted[path.split("/")[-1]] = len(captured)
            assert {item.get("drawer", item)["current"] for item in shown} == {str(successor.uuid)}
        return counted

    supersede(0, 2)
    few = pages()
    supersede(2, 9)
    assert pages() == few
