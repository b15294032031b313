import threading
import urllib.error
import urllib.request

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token

from dedup import services as write
from palace.models import AuditEntry, DrawerLink, EntityLink
from review import selectors
from tests.conftest import person_client

pytestmark = pytest.mark.django_db


def decide(client, item, action="dismiss", **extra):
    return client.post(
        f"/api/review/items/{item}/decisions", {"action": action, **extra}, format="json"
    )


def test_curator_decides_through_the_api(drawer_link, curator):
    response = decide(person_client(curator), f"d{drawer_link.pk}", note="both are true")
    assert response.status_code == 201
    body = response.json()
    assert (body["action"], body["actor"], body["item"], body["note"]) == (
        "dismiss",
        "cora",
        f"d{drawer_link.pk}",
        "both are true",
    )
    assert DrawerLink.objects.get().status == "dismissed"


def test_viewer_reads_but_cannot_decide(drawer_link, viewer):
    client = person_client(viewer)
    assert client.get("/api/review/queue").status_code == 200
    response = decide(client, f"d{drawer_link.pk}")
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert client.post("/api/review/decisions/1/revert", {}, format="json").status_code == 403
    assert DrawerLink.objects.get().status == "open"
    assert not AuditEntry.objects.exists()


def test_anonymous_gets_401(drawer_link, anonymous_api):
    assert anonymous_api.get("/api/review/queue").status_code == 401
    response = decide(anonymous_api, f"d{drawer_link.pk}")
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_second_decision_is_409_naming_who_and_when(drawer_link, curator, other_curator):
    decide(person_client(curator), f"d{drawer_link.pk}", "merge")
    response = decide(person_client(other_curator), f"d{drawer_link.pk}", "delete_link")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "already_decided"
    assert "cora already decided" in body["error"]
    assert body["details"]["action"] == "merge"
    assert AuditEntry.objects.count() == 1


def test_an_action_the_item_does_not_take_says_which_it_does(drawer_link, curator):
    response = decide(person_client(curator), f"d{drawer_link.pk}", "add_alias")
    assert response.json()["details"] == {
        "action": "add_alias",
        "offered": ["merge", "delete_link", "dismiss"],
    }


@pytest.mark.parametrize(
    ("item", "body", "status", "code"),
    [
        ("d{d}", {"action": "add_alias"}, 400, "invalid_action"),
        ("d{d}", {"action": "nonsense"}, 400, "invalid"),
        ("d{d}", {}, 400, "invalid"),
        ("d{d}", {"action": "merge", "canonical": "not-a-side"}, 400, "invalid"),
        ("zz9", {"action": "dismiss"}, 400, "invalid_id"),
        ("d99999", {"action": "dismiss"}, 404, "item_not_found"),
    ],
)
def test_bad_decision_requests(drawer_link, curator, item, body, status, code):
    response = person_client(curator).post(
        f"/api/review/items/{item.format(d=drawer_link.pk)}/decisions", body, format="json"
    )
    assert (response.status_code, response.json()["code"]) == (status, code)
    assert not AuditEntry.objects.exists()
    assert DrawerLink.objects.get().status == "open"


def test_deciding_an_item_removed_since_it_was_listed_says_it_is_gone(drawer_link, curator):
    """A page left open: the link went with its newer drawer, deleted meanwhile."""
    item = f"d{drawer_link.pk}"
    later = write.drawer_write(room=drawer_link.older.room, content=f"{drawer_link.older.content}!")
    assert later.links  # a later link: ids are never used again
    write.drawer_delete(drawer=drawer_link.newer)
    response = decide(person_client(curator), item)
    body = response.json()
    assert (response.status_code, body["code"]) == (404, "item_not_found")
    assert "removed after it was listed" in body["error"]
    assert body["details"] == {"item": item, "removed": True}
    never = decide(person_client(curator), "d99999").json()
    assert (never["error"], never.get("details")) == ("No review item with that id.", None)


def test_decisions_log_and_revert(drawer_link, curator):
    client = person_client(curator)
    decision = decide(client, f"d{drawer_link.pk}", "merge").json()
    log = client.get("/api/review/decisions", {"item": f"d{drawer_link.pk}"}).json()["results"]
    assert [(d["id"], d["reverted"]) for d in log] == [(decision["id"], False)]
    response = client.post(f"/api/review/decisions/{decision['id']}/revert", {}, format="json")
    assert response.status_code == 200
    assert response.json()[0]["action"] == "revert"
    assert DrawerLink.objects.get().status == "open"
    log = client.get("/api/review/decisions", {"action": "review.merge"}).json()["results"]
    assert log[0]["reverted"] is True
    # As the log shows a decision's action: "revert", "merge".
    shown = client.get("/api/review/decisions", {"action": "revert"}).json()["results"]
    assert [entry["action"] for entry in shown] == ["revert"]
    assert client.get("/api/review/decisions", {"action": "merge"}).json()["results"] == log
    refused = client.get("/api/review/decisions", {"action": "bogus"})
    assert (refused.status_code, refused.json()["code"]) == (400, "invalid")
    again = client.post(f"/api/review/decisions/{decision['id']}/revert", {}, format="json")
    assert again.status_code == 409
    assert again.json()["code"] == "already_reverted"
    assert client.post("/api/review/decisions/999999/revert", {}, format="json").status_code == 404


def test_queue_lists_both_kinds_with_filters(drawer_link, entity_link, curator):
    client = person_client(curator)
    body = client.get("/api/review/queue").json()
    assert [i["type"] for i in body["items"]] == ["similar_to", "possibly_same_as"]
    assert body["counts"]["drawer"] == 1
    assert body["counts"]["entity"] == 1
    assert body["counts"]["open"] == 2
    first = body["items"][0]
    assert first["rule"] == "near"
    assert first["older"]["content"].endswith("8080 for the API server.")
    assert client.get("/api/review/queue", {"type": "entity"}).json()["counts"]["drawer"] == 0
    assert [
        i["id"] for i in client.get("/api/review/queue", {"rule": "possible"}).json()["items"]
    ] == [f"e{entity_link.pk}"]
    assert client.get("/api/review/queue", {"wing": "ops"}).json()["counts"] == {
        **body["counts"],
        "entity": 0,
    }
    assert (
        client.get("/api/review/queue", {"q": "Katar"}).json()["items"][0]["id"]
        == f"e{entity_link.pk}"
    )
    assert client.get("/api/review/queue", {"min_similarity": "0.99"}).json()["items"] == []
    decide(client, f"d{drawer_link.pk}")
    assert [i["id"] for i in client.get("/api/review/queue").json()["items"]] == [
        f"e{entity_link.pk}"
    ]
    assert [
        i["id"] for i in client.get("/api/review/queue", {"status": "decided"}).json()["items"]
    ] == [f"d{drawer_link.pk}"]


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"type": "planet"}, "invalid"),
        ({"min_similarity": "high"}, "invalid"),
        ({"max_similarity": "2"}, "invalid"),
        ({"order": "random"}, "invalid"),
        ({"cursor": "!!!"}, "invalid_cursor"),
        # Each valid alone: clusters are the console's grouping (the API's are at
        # /api/review/clusters), and a run's proposals are of any type (the concurrency trial:
        # both answered proposals, or nothing, without a word).
        ({"type": "cluster"}, "invalid"),
        ({"type": "cluster", "run": "1"}, "invalid"),
        ({"type": "drawer", "run": "1"}, "invalid"),
    ],
)
def test_bad_queue_parameters(curator, params, code):
    response = person_client(curator).get("/api/review/queue", params)
    assert response.status_code == 400
    assert response.json()["code"] == code


@pytest.mark.parametrize("order", ["similarity", "similarity_asc", "newest", "oldest", "uncertain"])
def test_keyset_pages_cover_every_item_once_in_order(curator, dedup_settings, order):
    room = write.room_get_or_create(wing="w", room="r")
    base = "The quarterly report for the north region is due on the first Monday of the month"
    write.drawer_write(room=room, content=base)
    for n in range(6):
        write.drawer_write(room=room, content=base.replace("north", f"north{'x' * n}") + "!" * n)
    for name in ("Katarina", "Katerino", "Katerina", "Kathrina"):
        write.entity_resolve(name=name, kind="person")
    everything = person_client(curator).get("/api/review/queue", {"order": order}).json()["items"]
    total = DrawerLink.objects.count() + EntityLink.objects.count()
    assert len(everything) == total  # fits on one page of the API
    seen, cursor = [], None
    while True:
        page = selectors.queue_page(selectors.QueueFilters(order=order), cursor=cursor, size=4)
        assert len(page.items) <= 4
        seen += [i.id for i in page.items]
        cursor = page.next_cursor
        if not cursor:
            break
    # Pages of four give exactly the one-page order: nothing skipped, nothing repeated.
    assert seen == [i["id"] for i in everything]


def test_queue_query_count_is_constant(curator, dedup_settings, django_assert_max_num_queries):
    from django.db import connection as conn
    from django.test.utils import CaptureQueriesContext

    client = person_client(curator)
    room = write.room_get_or_create(wing="w", room="r")

    def grow(n):
        for i in range(n):
            text = f"Invoice number {i} for the cleaning contract of building {i} was paid in full"
            write.drawer_write(room=room, content=text)
            write.drawer_write(room=room, content=text.replace("paid", "payed"))

    def count():
        with CaptureQueriesContext(conn) as captured:
            assert client.get("/api/review/queue").status_code == 200
        return len(captured)

    grow(2)
    few = count()
    grow(30)
    assert count() == few


def test_stats_measure_precision_per_tier(drawer_link, entity_link, curator):
    client = person_client(curator)
    decide(client, f"d{drawer_link.pk}", "delete_link")
    decide(client, f"e{entity_link.pk}", "add_alias")
    stats = client.get("/api/review/stats").json()
    rows = {(r["tier"], r["precision"]) for r in stats["tiers"]}
    assert ("near", 0.0) in rows
    assert ("possible match", 1.0) in rows
    assert len(stats["queue"]) == 14
    assert stats["queue"][-1]["open"] == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="real concurrent requests need PostgreSQL"
)
def test_two_curators_racing_on_one_item_only_one_applies(
    live_server, drawer_link, curator, other_curator
):
    url = f"{live_server.url}/api/review/items/d{drawer_link.pk}/decisions"
    tokens = [Token.objects.get_or_create(user=u)[0].key for u in (curator, other_curator)]
    barrier = threading.Barrier(2)
    statuses = []

    def post(token, action):
        request = urllib.request.Request(
            url,
            data=f'{{"action": "{action}"}}'.encode(),
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        )
        barrier.wait()
        try:
            with urllib.request.urlopen(request) as response:
                statuses.append(response.status)
        except urllib.error.HTTPError as error:
            statuses.append(error.code)

    threads = [
        threading.Thread(target=post, args=(t, a))
        for t, a in zip(tokens, ("merge", "delete_link"), strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [201, 409]
    assert AuditEntry.objects.filter(action__startswith="review.").count() == 1


def test_the_queue_s_run_filter_is_in_the_schema(curator):
    schema = person_client(curator).get("/api/schema/", HTTP_ACCEPT="application/json").json()
    parameters = schema["paths"]["/api/review/queue"]["get"]["parameters"]
    assert "run" in [parameter["name"] for parameter in parameters]
