"""Item holds (issue 13, capability 13): a curator who opens an item holds it for a short time,
others see it as taken and are served the next untaken item; the 409 stays the final guard."""

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from dedup import services as write
from palace.models import DrawerLink
from review.forms import QueueFilterForm
from review.items import ItemRef
from review.models import ItemHold
from review.selectors import holds as hold_selectors
from review.selectors import queue_page
from review.services import holds as hold_services

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
TEXTS = (
    "Backups run nightly at two in the morning and are kept for thirty days.",
    "Katarina wants the code reviews before lunch, never on Friday afternoons.",
    "The staging cluster is rebuilt from the main branch every Monday morning.",
)


@pytest.fixture
def links(dedup_settings):
    """Three open drawer links, in the queue's default order."""
    room = write.room_get_or_create(wing="ops", room="dev")
    for text in TEXTS:
        write.drawer_write(room=room, content=text)
        write.drawer_write(room=room, content=text.replace("the", "teh", 1))
    return list(DrawerLink.objects.order_by("pk"))


def ref(link) -> ItemRef:
    return ItemRef.of(link)


def queue_order(user) -> list[str]:
    filters = QueueFilterForm({}).filters()
    return [str(i.ref) for i in queue_page(filters).items]


def test_opening_an_item_holds_it_for_the_curator(links, curator):
    hold = hold_services.hold_take(item=ref(links[0]), curator=curator)
    assert hold.curator == curator
    assert hold.item == f"d{links[0].pk}"
    assert hold.expires_at > timezone.now() + timedelta(seconds=hold_services.HOLD_SECONDS - 5)


def test_a_second_curator_gets_the_first_ones_hold_back(links, curator, other_curator):
    hold_services.hold_take(item=ref(links[0]), curator=curator)
    hold = hold_services.hold_take(item=ref(links[0]), curator=other_curator)
    assert hold.curator == curator
    assert ItemHold.objects.get().curator == curator


def test_renewing_extends_the_hold(links, curator):
    first = hold_services.hold_take(item=ref(links[0]), curator=curator)
    ItemHold.objects.update(expires_at=timezone.now() + timedelta(seconds=5))
    renewed = hold_services.hold_take(item=ref(links[0]), curator=curator)
    assert renewed.expires_at >= first.expires_at
    assert ItemHold.objects.count() == 1


def test_an_expired_hold_is_ignored_taken_over_and_cleaned(links, curator, other_curator):
    hold_services.hold_take(item=ref(links[0]), curator=curator)
    hold_services.hold_take(item=ref(links[1]), curator=other_curator)
    ItemHold.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert hold_selectors.holders([ref(links[0])], other_curator) == {}
    hold = hold_services.hold_take(item=ref(links[0]), curator=other_curator)
    assert hold.curator == other_curator
    assert list(ItemHold.objects.values_list("item", flat=True)) == [f"d{links[0].pk}"]


def test_a_curator_holds_one_item_at_a_time(links, curator):
    hold_services.hold_take(item=ref(links[0]), curator=curator)
    hold_services.hold_take(item=ref(links[1]), curator=curator)
    assert list(ItemHold.objects.values_list("item", flat=True)) == [f"d{links[1].pk}"]


def test_release_lets_go_of_ones_own_hold_only(links, curator, other_curator):
    hold_services.hold_take(item=ref(links[0]), curator=curator)
    hold_services.hold_release(item=ref(links[0]), curator=other_curator)
    assert ItemHold.objects.count() == 1
    hold_services.hold_release(item=ref(links[0]), curator=curator)
    assert ItemHold.objects.count() == 0


def test_holders_names_other_curators_in_one_query(
    links, curator, other_curator, django_assert_num_queries
):
    hold_services.hold_take(item=ref(links[0]), curator=curator)
    hold_services.hold_take(item=ref(links[1]), curator=other_curator)
    with django_assert_num_queries(1):
        held = hold_selectors.holders([ref(link) for link in links], other_curator)
    assert held == {f"d{links[0].pk}": "cora"}


def test_next_untaken_passes_items_others_hold(links, curator, other_curator):
    first, second, third = queue_order(curator)
    filters = QueueFilterForm({}).filters()
    hold_services.hold_take(item=ItemRef.parse(first), curator=curator)
    assert str(hold_selectors.next_untaken(filters, other_curator)) == second
    assert str(hold_selectors.next_untaken(filters, curator)) == first  # one's own: not passed
    after = DrawerLink.objects.get(pk=ItemRef.parse(second).pk)
    hold_services.hold_take(item=ItemRef.parse(third), curator=curator)
    assert hold_selectors.next_untaken(filters, other_curator, after=after) is None


def test_item_page_takes_the_hold_and_shows_it_taken_to_others(
    client, links, curator, other_curator
):
    url = f"/items/d{links[0].pk}/"
    client.force_login(curator)
    mine = client.get(url).content.decode()
    assert "You hold this item" in mine
    assert f'hx-post="/items/d{links[0].pk}/hold"' in mine
    client.force_login(other_curator)
    theirs = client.get(url).content.decode()
    assert "Taken by cora" in theirs
    assert ItemHold.objects.get().curator == curator


def test_a_reader_takes_no_hold_but_sees_who_holds_it(client, links, curator, viewer):
    hold_services.hold_take(item=ref(links[0]), curator=curator)
    client.force_login(viewer)
    body = client.get(f"/items/d{links[0].pk}/").content.decode()
    assert "Taken by cora" in body
    assert ItemHold.objects.count() == 1


def test_the_renewal_endpoint_renews_and_answers_the_partial(client, links, curator):
    client.force_login(curator)
    hold_services.hold_take(item=ref(links[0]), curator=curator)
    ItemHold.objects.update(expires_at=timezone.now() + timedelta(seconds=5))
    response = client.post(f"/items/d{links[0].pk}/hold", **HTMX)
    assert response.status_code == 200
    assert 'id="hold"' in response.content.decode()
    assert ItemHold.objects.get().expires_at > timezone.now() + timedelta(seconds=60)


def test_the_renewal_endpoint_shows_the_item_on_get_and_refuses_bad_ids(client, links, curator):
    client.force_login(curator)
    assert client.get(f"/items/d{links[0].pk}/hold")["Location"] == f"/items/d{links[0].pk}/"
    assert client.post("/items/zz/hold").status_code == 404


def test_queue_shows_items_others_hold_as_taken(client, links, curator, other_curator):
    hold_services.hold_take(item=ref(links[0]), curator=curator)
    client.force_login(other_curator)
    assert "taken by cora" in client.get("/").content.decode()
    client.force_login(curator)
    assert "taken by" not in client.get("/").content.decode()


def test_the_queue_costs_the_same_queries_with_holds(client, links, curator, other_curator):
    client.force_login(other_curator)

    def count() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/").status_code == 200
        return len(captured)

    without = count()
    for link in links:
        ItemHold.objects.create(
            item=f"d{link.pk}", curator=curator, expires_at=timezone.now() + timedelta(minutes=2)
        )
    assert count() == without


def test_after_a_decision_the_next_item_is_one_nobody_else_holds(
    client, links, curator, other_curator
):
    first, second, third = queue_order(curator)
    hold_services.hold_take(item=ItemRef.parse(second), curator=curator)
    client.force_login(other_curator)
    client.get(f"/items/{first}/")
    response = client.post(f"/items/{first}/decide", {"action": "dismiss"}, **HTMX)
    assert third in response["HX-Push-Url"]  # the next item, served in place
    assert not ItemHold.objects.filter(item=first).exists()  # released with the decision


def test_a_held_item_can_still_be_decided_and_the_409_guards_the_rest(
    client, links, curator, other_curator
):
    item = f"d{links[0].pk}"
    hold_services.hold_take(item=ref(links[0]), curator=curator)
    client.force_login(other_curator)
    assert client.post(f"/items/{item}/decide", {"action": "dismiss"}).status_code == 302
    client.force_login(curator)
    response = client.post(f"/items/{item}/decide", {"action": "merge"}, **HTMX)
    assert response.status_code == 409


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_racing_curators_one_hold_wins(links, django_user_model, curator):
    curators = [curator] + [
        django_user_model.objects.create_user(f"racer{i}", password="x") for i in range(3)
    ]

    def take(user, item: ItemRef, barrier: threading.Barrier) -> int:
        try:
            barrier.wait()
            return hold_services.hold_take(item=item, curator=user).curator_id
        finally:
            connections.close_all()

    for link in links:
        barrier = threading.Barrier(len(curators))
        with ThreadPoolExecutor(max_workers=len(curators)) as pool:
            holders = list(
                pool.map(take, curators, [ref(link)] * len(curators), [barrier] * len(curators))
            )
        winner = ItemHold.objects.get(item=str(ref(link))).curator_id
        assert holders == [winner] * len(curators)  # everyone agrees on the one holder


def test_a_decided_item_is_held_by_nobody(client, links, curator):
    client.force_login(curator)
    item = f"d{links[0].pk}"
    client.post(f"/items/{item}/decide", {"action": "dismiss"})
    body = client.get(f"/items/{item}/").content.decode()
    assert 'id="hold"' not in body
    assert not ItemHold.objects.exists()
