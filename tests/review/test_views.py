"""The console's pages: permissions, full page versus htmx partial, decisions, audit, revert,
and a constant number of queries on the queue and item pages."""

import csv
import io
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dedup import services as write
from palace.models import AuditEntry, Drawer, DrawerLink, EntityLink

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def as_viewer(client, viewer):
    client.force_login(viewer)
    return client


def test_anonymous_is_sent_to_login(client, drawer_link):
    for url in ["/", f"/items/d{drawer_link.pk}/", "/audit/", "/stats/"]:
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    response = client.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"})
    assert response.status_code == 302
    assert DrawerLink.objects.get().status == "open"


def test_login_page_logs_a_curator_in(client, curator):
    response = client.post("/accounts/login/", {"username": "cora", "password": "secret-pass-1"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200


def test_queue_full_page_and_partial(as_curator, drawer_link, entity_link):
    page = as_curator.get("/")
    body = page.content.decode()
    assert "<html" in body
    assert 'name="type"' in body
    assert f"d{drawer_link.pk}" in body
    assert "2</strong> open" in body
    partial = as_curator.get("/", {"type": "entity"}, **HTMX).content.decode()
    assert "<html" not in partial
    assert f"e{entity_link.pk}" in partial
    assert f">d{drawer_link.pk}<" not in partial


def test_bad_queue_filter_is_a_clear_error(as_curator):
    response = as_curator.get("/", {"min_similarity": "lots"})
    assert response.status_code == 400
    assert "“Similarity from” must be a number" in response.content.decode()


def test_viewer_sees_no_decision_controls_and_forged_posts_get_403(as_viewer, drawer_link):
    page = as_viewer.get(f"/items/d{drawer_link.pk}/").content.decode()
    assert "Delete link" not in page
    assert 'name="action"' not in page
    assert "deciding needs the curators' permission" in page
    assert 'type="checkbox"' not in as_viewer.get("/").content.decode()
    for url, data in [
        (f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"}),
        ("/bulk", {"items": [f"d{drawer_link.pk}"], "action": "dismiss"}),
        ("/undo", {}),
        ("/audit/1/revert", {}),
    ]:
        assert as_viewer.post(url, data).status_code == 403
    assert DrawerLink.objects.get().status == "open"
    assert not AuditEntry.objects.exists()


def test_drawer_item_shows_evidence_diff_and_number_warning(as_curator, drawer_link):
    body = as_curator.get(f"/items/d{drawer_link.pk}/").content.decode()
    assert "differ in a number or a date" in body
    assert "8080" in body
    assert "8081" in body
    assert '<del class="digit">0</del>' in body
    assert '<ins class="digit">1</ins>' in body
    assert "Threshold in force" in body
    assert "Same fingerprint" in body
    assert 'data-key="m"' in body
    assert 'data-key="a"' not in body  # no alias for drawers


def test_entity_item_shows_both_names_keys_and_distance(as_curator, entity_link):
    body = as_curator.get(f"/items/e{entity_link.pk}/").content.decode()
    assert "Katarina" in body
    assert "Katerino" in body
    assert "Edit distance" in body
    assert 'data-key="a"' in body
    assert 'name="canonical"' in body


def test_unknown_item_is_404(as_curator):
    assert as_curator.get("/items/d99999/").status_code == 404
    assert as_curator.get("/items/zz/").status_code == 404


def test_decision_without_javascript_redirects_to_the_next_item(
    as_curator, drawer_link, entity_link
):
    response = as_curator.post(
        f"/items/d{drawer_link.pk}/decide", {"action": "dismiss", "note": "both true"}
    )
    assert response.status_code == 302
    assert response["Location"] == f"/items/e{entity_link.pk}/"
    entry = AuditEntry.objects.get()
    assert entry.data["note"] == "both true"
    assert entry.actor.username == "cora"
    last = as_curator.post(f"/items/e{entity_link.pk}/decide", {"action": "dismiss"})
    assert last["Location"] == "/"  # nothing left: back to the queue


def test_decision_with_htmx_loads_the_next_item_in_place(as_curator, drawer_link, entity_link):
    response = as_curator.post(
        f"/items/d{drawer_link.pk}/decide", {"action": "merge", "query": "order=newest"}, **HTMX
    )
    assert response.status_code == 200
    # One round trip: the next item comes back with the decision, under its own URL.
    assert response["HX-Push-Url"] == f"/items/e{entity_link.pk}/?order=newest"
    body = response.content.decode()
    assert f'data-item="e{entity_link.pk}"' in body
    assert body.lstrip().startswith(("<ul", "<div"))  # a partial, not a page
    assert 'name="query" value="order=newest"' in body  # still in the curator's filter


def test_already_decided_shows_who_and_when(as_curator, other_curator, client, drawer_link):
    write_as_other = client.__class__()
    write_as_other.force_login(other_curator)
    write_as_other.post(f"/items/d{drawer_link.pk}/decide", {"action": "delete_link"})
    response = as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "merge"}, **HTMX)
    assert response.status_code == 409
    assert "otto already decided this item (delete_link)" in response.content.decode()
    assert AuditEntry.objects.count() == 1


def test_bulk_decision(as_curator, dedup_settings):
    room = write.room_get_or_create(wing="w", room="r")
    base = "The quarterly report for the north region is due on the first Monday"
    write.drawer_write(room=room, content=base)
    chosen = [write.drawer_write(room=room, content=f"{base}{m}").links[0].pk for m in "!?"]
    response = as_curator.post(
        "/bulk", {"items": [f"d{pk}" for pk in chosen], "action": "dismiss", "next": "/"}
    )
    assert response.status_code == 302
    batches = set(AuditEntry.objects.values_list("batch", flat=True))
    assert len(batches) == 1
    assert None not in batches
    assert AuditEntry.objects.count() == 2
    statuses = dict(DrawerLink.objects.values_list("pk", "status"))
    # The two chosen links are dismissed; the third ("!" ~ "?") was not selected and stays open.
    assert {pk: statuses.pop(pk) for pk in chosen} == dict.fromkeys(chosen, "dismissed")
    assert set(statuses.values()) == {"open"}


def test_undo_reverts_the_decision_offered(as_curator, drawer_link):
    as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "merge"})
    assert Drawer.objects.current().count() == 1
    decision = AuditEntry.objects.get()
    response = as_curator.post("/undo", {"decision": decision.pk})
    assert response.status_code == 302
    assert response["Location"] == f"/items/d{drawer_link.pk}/"
    assert Drawer.objects.current().count() == 2
    assert DrawerLink.objects.get().status == "open"


def test_audit_page_filters_exports_and_reverts(as_curator, drawer_link, entity_link):
    as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "delete_link"})
    as_curator.post(f"/items/e{entity_link.pk}/decide", {"action": "add_alias"})
    page = as_curator.get("/audit/", {"action": "review.delete_link"}).content.decode()
    assert "review.delete_link" in page
    assert "review.add_alias" not in page
    rows = list(
        csv.DictReader(io.StringIO(as_curator.get("/audit/", {"format": "csv"}).content.decode()))
    )
    assert [r["action"] for r in rows] == ["review.add_alias", "review.delete_link"]
    exported = json.loads(as_curator.get("/audit/", {"format": "json", "actor": "cora"}).content)
    assert exported[1]["before"]["link"]["id"] == drawer_link.pk
    assert as_curator.get("/audit/", {"since": "yesterday"}).status_code == 400
    delete_entry = AuditEntry.objects.get(action="review.delete_link")
    response = as_curator.post(f"/audit/{delete_entry.pk}/revert", {"next": "/audit/"})
    assert response.status_code == 302
    assert DrawerLink.objects.filter(pk=drawer_link.pk).exists()
    assert "reverted" in as_curator.get("/audit/").content.decode()


def test_revert_with_dependents_asks_to_revert_together(as_curator, drawer_link, dedup_settings):
    as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "merge"})
    first = AuditEntry.objects.get()
    third = write.drawer_write(
        room=drawer_link.older.room, content=drawer_link.older.content.replace("8080", "8082")
    )
    link = next(lk for lk in third.links if lk.older_id == drawer_link.older_id)
    as_curator.post(f"/items/d{link.pk}/decide", {"action": "merge"})
    response = as_curator.post(f"/audit/{first.pk}/revert", {"next": "/audit/"})
    assert response.status_code == 409
    assert b"Revert all 2 together" in response.content
    # The dependent said, not only its number, and opened at its item in the log.
    second = AuditEntry.objects.exclude(pk=first.pk).get()
    page = response.content.decode()
    assert f"#{second.pk}</a>: merge on d{link.pk} by cora" in page
    assert f'href="/audit/?item=d{link.pk}"' in page
    response = as_curator.post(f"/audit/{first.pk}/revert", {"next": "/audit/", "cascade": "1"})
    assert response.status_code == 302
    assert Drawer.objects.current().count() == 3


def test_stats_page_renders_svg(as_curator, drawer_link):
    as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "delete_link"})
    body = as_curator.get("/stats/").content.decode()
    assert "<svg" in body
    assert "near" in body
    assert "0.000" in body


def count(client, url, **extra) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url, **extra).status_code == 200
    return len(captured)


def test_queue_and_item_pages_keep_a_constant_query_count(as_curator, dedup_settings):
    room = write.room_get_or_create(wing="w", room="r")
    write.entity_resolve(name="Katarina", kind="person")
    write.entity_resolve(name="Katerino", kind="person")  # two edits: a possibly_same_as pair

    def grow(start, n):
        for i in range(start, start + n):
            text = f"Invoice number {i} for the cleaning contract of building {i} was paid in full"
            write.drawer_write(room=room, content=text)
            newest = write.drawer_write(room=room, content=text.replace("paid", "payed")).drawer
            write.mention_add(drawer=newest, name="Katarina", kind="person")
            write.mention_add(drawer=newest, name="Katerino", kind="person")

    grow(0, 3)
    first = DrawerLink.objects.order_by("pk").first()
    entity = EntityLink.objects.get()
    pages = ("/", f"/items/d{first.pk}/", f"/items/e{entity.pk}/")
    before = [count(as_curator, url) for url in pages]
    grow(3, 30)
    assert DrawerLink.objects.count() > 60  # more rows, more links, more mentions...
    assert [count(as_curator, url) for url in pages] == before  # ...the same queries


def test_admin_actions_on_links_decide_through_the_service(admin_client, drawer_link, entity_link):
    response = admin_client.post(
        "/admin/palace/drawerlink/",
        {"action": "delete_link", "_selected_action": [drawer_link.pk]},
        follow=True,
    )
    assert response.status_code == 200
    entry = AuditEntry.objects.get()
    assert entry.action == "review.delete_link"
    assert entry.data["evidence"]["via"] == "admin"
    assert not DrawerLink.objects.exists()
    admin_client.post(
        "/admin/palace/entitylink/", {"action": "add_alias", "_selected_action": [entity_link.pk]}
    )
    assert EntityLink.objects.get().status == "aliased"
    again = admin_client.post(
        "/admin/palace/entitylink/",
        {"action": "dismiss", "_selected_action": [entity_link.pk]},
        follow=True,
    )
    assert b"already decided" in again.content
    assert AuditEntry.objects.count() == 2


def test_item_page_links_the_next_item_in_queue_order(as_curator, drawer_link, entity_link):
    body = as_curator.get(f"/items/d{drawer_link.pk}/").content.decode()
    assert f'href="/items/e{entity_link.pk}/" data-key-next' in body
    last = as_curator.get(f"/items/e{entity_link.pk}/").content.decode()
    assert "data-key-next" not in last


def test_alias_offers_to_settle_the_pairs_it_makes_redundant(as_curator, dedup_settings):
    # Katerina is one edit from both Katarina and Katerino: two open pairs.
    write.entity_resolve(name="Katarina", kind="person")
    write.entity_resolve(name="Katerino", kind="person")
    write.entity_resolve(name="Katerina", kind="person")
    first = EntityLink.objects.get(newer__name="Katerino", older__name="Katarina")
    redundant = EntityLink.objects.get(newer__name="Katerina", older__name="Katerino")
    kept = EntityLink.objects.get(newer__name="Katerina", older__name="Katarina")
    page = as_curator.get(f"/items/e{first.pk}/").content.decode()
    assert f'name="also_dismiss" value="e{redundant.pk}"' in page
    assert f'value="e{kept.pk}"' not in page
    as_curator.post(
        f"/items/e{first.pk}/decide", {"action": "add_alias", "also_dismiss": [f"e{redundant.pk}"]}
    )
    statuses = dict(EntityLink.objects.values_list("pk", "status"))
    assert statuses == {first.pk: "aliased", redundant.pk: "dismissed", kept.pk: "open"}
    batches = set(AuditEntry.objects.values_list("batch", flat=True))
    assert len(batches) == 1
    assert None not in batches


def test_bulk_over_every_item_of_a_filter(as_curator, drawer_link, entity_link):
    form = {"all_matching": "1", "filter": "type=entity", "action": "dismiss", "next": "/"}
    confirm = as_curator.post("/bulk", form)  # first its reach, to confirm
    assert confirm.status_code == 200
    response = as_curator.post("/bulk", form | {"confirm": confirm.context["token"]})
    assert response.status_code == 302
    assert EntityLink.objects.get().status == "dismissed"
    assert DrawerLink.objects.get().status == "open"
    bad = as_curator.post(
        "/bulk", {"all_matching": "1", "filter": "type=planet", "action": "dismiss"}
    )
    assert bad.status_code == 302
    assert AuditEntry.objects.count() == 1


def test_error_pages_are_the_apps_own(as_viewer, drawer_link):
    missing = as_viewer.get("/items/d99999/")
    assert missing.status_code == 404
    assert b"Back to the review queue" in missing.content
    forbidden = as_viewer.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"})
    assert forbidden.status_code == 403
    assert b"decide permission" in forbidden.content


def test_entity_item_samples_both_sides_however_many_mentions_one_has(
    as_curator, entity_link, dedup_settings
):
    room = write.room_get_or_create(wing="w", room="r")
    strict = write.DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)
    older = write.drawer_write(room=room, content="Katarina wrote the onboarding guide.").drawer
    write.mention_add(drawer=older, name="Katarina", kind="person", config=strict)
    for n in range(45):  # many newer mentions of the other side
        drawer = write.drawer_write(
            room=room, content=f"Note {n}: Katerino reviewed change {n}."
        ).drawer
        write.mention_add(drawer=drawer, name="Katerino", kind="person", config=strict)
    body = as_curator.get(f"/items/e{entity_link.pk}/").content.decode()
    assert "Katarina wrote the onboarding guide." in body
    assert body.count("reviewed change") == 3
