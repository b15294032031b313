"""Clusters through the API: read like the queue, decided at once, reverted as one batch."""

import uuid

import pytest

from api import urls as api_urls
from api.permissions import ALL_WING_ROUTES
from dedup import services as write
from palace.models import AuditEntry, Drawer, DrawerLink, EntityLink
from tests.conftest import agent_client
from tests.review.clusters_data import FACT, ada_entities, five_drawers

pytestmark = pytest.mark.django_db


@pytest.fixture
def curator_api(api, user, grant):
    grant(user, "decide")
    return api


def test_list_and_read_a_cluster(curator_api, dedup_settings, django_assert_max_num_queries):
    five_drawers()
    ada_entities()
    body = curator_api.get("/api/review/clusters").json()
    assert body["total"] == 2
    assert [c["size"] for c in body["clusters"]] == [5, 4]
    drawers = body["clusters"][0]
    assert drawers["type"] == "similar_to"
    assert drawers["scope"] == "people/preferences"
    assert len(drawers["links"]) == 10
    people = curator_api.get("/api/review/clusters", {"kind": "person"}).json()
    assert [c["type"] for c in people["clusters"]] == ["possibly_same_as"]
    last = DrawerLink.objects.order_by("-pk").first()
    one = curator_api.get(f"/api/review/clusters/d{last.pk}").json()
    assert one["id"] == drawers["id"]
    assert [m["id"] for m in one["members"]] == [m["id"] for m in drawers["members"]]


def test_unknown_and_malformed_clusters(curator_api, dedup_settings):
    room = write.room_get_or_create(wing="ops", room="dev")
    write.drawer_write(room=room, content=FACT)
    (drawer_link,) = write.drawer_write(room=room, content=FACT.upper()).links
    assert (
        curator_api.get(f"/api/review/clusters/d{drawer_link.pk}").json()["code"]
        == "item_not_found"
    )
    assert curator_api.get("/api/review/clusters/x1").json()["code"] == "invalid_id"


def test_decide_at_once_then_revert_the_batch(curator_api, dedup_settings):
    five_drawers()
    cluster = curator_api.get("/api/review/clusters").json()["clusters"][0]
    oldest, *others = [m["id"] for m in cluster["members"]]
    response = curator_api.post(
        f"/api/review/clusters/{cluster['id']}/decisions",
        {
            "canonical": oldest,
            "merge": others[:3],
            "distinct": others[3:],
            "links": cluster["links"],
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    result = response.json()
    assert (result["merged"], result["distinct"]) == (3, 1)
    assert len(result["decisions"]) == 10
    assert Drawer.objects.current().count() == 2
    reverted = curator_api.post(f"/api/review/batches/{result['batch']}/revert", {}, format="json")
    assert reverted.status_code == 200
    assert len(reverted.json()) == 10
    assert Drawer.objects.current().count() == 5
    again = curator_api.post(f"/api/review/batches/{result['batch']}/revert", {}, format="json")
    assert again.status_code == 409  # a retry is told it is done, as a decision's revert is
    assert again.json()["code"] == "already_reverted"


def test_stale_links_are_a_409_and_nothing_is_written(curator_api, dedup_settings):
    ada_entities()
    cluster = curator_api.get("/api/review/clusters").json()["clusters"][0]
    oldest, *others = [m["id"] for m in cluster["members"]]
    response = curator_api.post(
        f"/api/review/clusters/{cluster['id']}/decisions",
        {"canonical": oldest, "merge": others, "links": cluster["links"][:-1]},
        format="json",
    )
    assert response.status_code == 409
    assert response.json()["code"] == "cluster_changed"
    assert response.json()["details"]["joined"]
    assert not AuditEntry.objects.exists()
    assert set(EntityLink.objects.values_list("status", flat=True)) == {"open"}


def test_a_cluster_decided_since_it_was_read_is_a_409(curator_api, dedup_settings):
    five_drawers()
    cluster = curator_api.get("/api/review/clusters").json()["clusters"][0]
    oldest, *others = [m["id"] for m in cluster["members"]]
    body = {"canonical": oldest, "distinct": others, "links": cluster["links"]}
    url = f"/api/review/clusters/{cluster['id']}/decisions"
    curator_api.post(url, body, format="json")
    again = curator_api.post(url, body, format="json")
    assert again.status_code == 409
    assert again.json()["code"] == "cluster_changed"


def test_a_cluster_that_never_was_is_a_404(curator_api, dedup_settings):
    five_drawers()
    cluster = curator_api.get("/api/review/clusters").json()["clusters"][0]
    body = {"canonical": cluster["members"][0]["id"], "links": ["d999"]}
    response = curator_api.post("/api/review/clusters/d999/decisions", body, format="json")
    assert response.json()["code"] == "item_not_found"


def test_deciding_needs_the_decide_permission(api, dedup_settings):
    five_drawers()
    cluster = api.get("/api/review/clusters").json()["clusters"][0]
    response = api.post(
        f"/api/review/clusters/{cluster['id']}/decisions",
        {"canonical": cluster["members"][0]["id"], "merge": [], "links": cluster["links"]},
        format="json",
    )
    assert response.status_code == 403


def test_a_key_of_some_wings_reads_no_cluster(user, dedup_settings):
    five_drawers()
    client = agent_client(user.username, wings=["ops"], rights=["read"])
    response = client.get("/api/review/clusters")
    assert response.status_code == 403
    assert response.json()["code"] == "out_of_scope"


def test_a_key_of_some_wings_reads_no_clusters_members(user, dedup_settings):
    five_drawers()
    last = DrawerLink.objects.order_by("-pk").first()
    client = agent_client(user.username, wings=["ops"], rights=["read"])
    response = client.get(f"/api/review/clusters/d{last.pk}")
    assert response.json()["code"] == "out_of_scope"


def test_a_curators_key_of_some_wings_decides_no_cluster(curator_api, user, dedup_settings):
    five_drawers()
    cluster = curator_api.get("/api/review/clusters").json()["clusters"][0]
    client = agent_client(user.username, wings=["ops"])
    response = client.post(
        f"/api/review/clusters/{cluster['id']}/decisions",
        {"canonical": cluster["members"][0]["id"], "distinct": [], "links": cluster["links"]},
        format="json",
    )
    assert response.json()["code"] == "out_of_scope"
    assert not AuditEntry.objects.exists()


def test_a_curators_key_of_some_wings_reverts_no_batch(curator_api, user, dedup_settings):
    five_drawers()
    cluster = curator_api.get("/api/review/clusters").json()["clusters"][0]
    oldest, *others = [m["id"] for m in cluster["members"]]
    batch = curator_api.post(
        f"/api/review/clusters/{cluster['id']}/decisions",
        {"canonical": oldest, "distinct": others, "links": cluster["links"]},
        format="json",
    ).json()["batch"]
    client = agent_client(user.username, wings=["ops"])
    response = client.post(f"/api/review/batches/{batch}/revert", {}, format="json")
    assert response.json()["code"] == "out_of_scope"
    assert not AuditEntry.objects.filter(action__endswith="revert").exists()


def test_every_review_and_sweep_route_spans_every_wing():
    names = {p.name for p in api_urls.urlpatterns if getattr(p, "name", None)}
    spanning = {n for n in names if n.startswith(("review-", "sweep-"))}
    assert spanning - ALL_WING_ROUTES == set()


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/api/review/items/d999999/decisions", "item_not_found"),
        ("/api/review/items/p999999/decisions", "item_not_found"),
        ("/api/review/decisions/999999/revert", "decision_not_found"),
        ("/api/review/clusters/d999999/decisions", "item_not_found"),
        (f"/api/review/batches/{uuid.UUID(int=7)}/revert", "decision_not_found"),
    ],
)
@pytest.mark.parametrize("body", [{"bogus": 1}, [], "text"], ids=["unknown field", "list", "str"])
def test_an_unknown_id_is_a_404_whatever_the_body(curator_api, dedup_settings, path, code, body):
    response = curator_api.post(path, body, format="json")
    assert response.status_code == 404
    assert response.json()["code"] == code


def test_a_decided_item_is_a_409_not_a_404_whatever_the_body(curator_api, dedup_settings):
    """A merge deletes its link; the item is still known, as decided."""
    five_drawers()
    link = DrawerLink.objects.order_by("pk").first()
    item = f"/api/review/items/d{link.pk}/decisions"
    assert curator_api.post(item, {"action": "merge"}, format="json").status_code == 201
    again = curator_api.post(item, {"bogus": 1}, format="json")
    assert again.status_code == 400  # known: its body is read, and refused
    assert curator_api.post(item, {"action": "merge"}, format="json").status_code == 409
