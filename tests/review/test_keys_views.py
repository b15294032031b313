"""Issue 13, defects 1-5, at the view level: Enter in a form, a session ended mid-work, the
visible undo and batch reverts, confirmation of wide actions, and pages for the Back button."""

import re
import uuid

import pytest
from django.test import Client

from dedup import services as write
from dedup.services import DedupConfig
from palace.models import AuditEntry, DrawerLink, EntityLink
from review import services
from review.models import SweepRun
from review.services import sweeps as sweep_services

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
BASE = "The quarterly report for the north region is due on the first Monday"


# --- 1 ------------------------------------------------------------------------------------------


def test_the_decide_forms_first_submit_button_is_disabled(as_curator, drawer_link):
    page = as_curator.get(f"/items/d{drawer_link.pk}/").content.decode()
    form = page[page.index('<form class="decide"') :]
    first_button = re.search(r"<button[^>]*>", form).group(0)
    assert "disabled" in first_button


# --- 2 ------------------------------------------------------------------------------------------


def test_a_decision_without_a_session_sends_htmx_to_the_login_page(client, drawer_link):
    item = f"/items/d{drawer_link.pk}/"
    response = client.post(
        f"{item}decide",
        {"action": "merge", "query": "type=drawer"},
        HTTP_HX_CURRENT_URL=f"http://testserver{item}",
        **HTMX,
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/accounts/login/?next=/items/d1/%3Ftype%3Ddrawer".replace(
        "d1", f"d{drawer_link.pk}"
    )
    assert not AuditEntry.objects.exists()


def test_any_htmx_request_without_a_session_returns_to_the_page_it_came_from(client):
    response = client.get(
        "/", {"type": "entity"}, HTTP_HX_CURRENT_URL="http://testserver/?q=x", **HTMX
    )
    assert response["HX-Redirect"] == "/accounts/login/?next=/%3Fq%3Dx"


def test_a_decision_without_a_session_and_without_javascript_returns_to_the_item(
    client, drawer_link
):
    response = client.post(f"/items/d{drawer_link.pk}/decide", {"action": "merge"})
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next=/items/d{drawer_link.pk}/"


def test_a_stale_csrf_token_reloads_an_htmx_page_and_says_so(curator, drawer_link):
    client = Client(enforce_csrf_checks=True)
    client.force_login(curator)
    item = f"/items/d{drawer_link.pk}/"
    response = client.post(f"{item}decide", {"action": "merge"}, **HTMX)
    assert response["HX-Refresh"] == "true"
    assert "was not made" in client.get(item).content.decode()
    assert client.post(f"{item}decide", {"action": "merge"}).status_code == 403
    assert not AuditEntry.objects.exists()


def test_action_urls_reached_by_get_show_their_page(as_curator, drawer_link):
    decide = as_curator.get(f"/items/d{drawer_link.pk}/decide", {"type": "drawer"})
    assert decide["Location"] == f"/items/d{drawer_link.pk}/?type=drawer"
    assert as_curator.get("/bulk")["Location"] == "/"
    assert as_curator.get("/undo")["Location"] == "/"
    assert as_curator.get("/audit/1/revert")["Location"] == "/audit/"
    assert as_curator.put(f"/items/d{drawer_link.pk}/decide").status_code == 405


# --- 3 ------------------------------------------------------------------------------------------


def test_a_decision_offers_a_visible_undo_once(as_curator, drawer_link):
    response = as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"})
    page = as_curator.get(response["Location"]).content.decode()
    entry = AuditEntry.objects.get()
    assert f'name="decision" value="{entry.pk}"' in page
    assert f"Undo dismiss on d{drawer_link.pk}" in page
    assert "Undo dismiss" not in as_curator.get("/").content.decode()


def test_the_undo_button_reverts_the_decision_it_names(as_curator, drawer_link, entity_link):
    as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"})
    as_curator.post(f"/items/e{entity_link.pk}/decide", {"action": "dismiss"})
    named = AuditEntry.objects.get(data__item=f"d{drawer_link.pk}")
    response = as_curator.post("/undo", {"decision": named.pk})
    assert response["Location"] == f"/items/d{drawer_link.pk}/"
    assert DrawerLink.objects.get().status == "open"
    assert EntityLink.objects.get().status == "dismissed"


def test_bulk_offers_to_undo_the_batch_and_u_undoes_all_of_it(as_curator, triangle):
    items = [f"d{link.pk}" for link in triangle]
    as_curator.post("/bulk", {"items": items, "action": "dismiss", "next": "/"})
    page = as_curator.get("/").content.decode()
    assert "Undo all 3 decisions of this batch" in page
    batch = str(AuditEntry.objects.first().batch)
    response = as_curator.post("/undo", {"batch": batch})  # the `u` key: the offer's form
    assert response.status_code == 302
    assert set(DrawerLink.objects.values_list("status", flat=True)) == {"open"}
    reverts = AuditEntry.objects.filter(action="review.revert")
    assert reverts.count() == 3
    assert len(set(reverts.values_list("batch", flat=True))) == 1


def _batch_then_dependant(as_curator, triangle):
    """A bulk dismiss of two links, then a merge that touches both: the merge depends on it."""
    first, second, third = triangle
    as_curator.post(
        "/bulk", {"items": [f"d{first.pk}", f"d{second.pk}"], "action": "dismiss", "next": "/"}
    )
    batch = AuditEntry.objects.first().batch
    as_curator.post(f"/items/d{third.pk}/decide", {"action": "merge"})  # touches two of them
    return batch, AuditEntry.objects.get(data__item=f"d{third.pk}")


def test_a_batch_revert_with_a_dependant_asks_first_and_reverts_nothing(as_curator, triangle):
    batch, later = _batch_then_dependant(as_curator, triangle)
    response = as_curator.post(f"/batches/{batch}/revert", {"next": "/audit/"})
    assert response.status_code == 409
    assert f"#{later.pk}</a>" in response.content.decode()
    assert not AuditEntry.objects.filter(action="review.revert").exists()


def test_the_batch_confirm_page_keeps_where_to_return(as_curator, triangle):
    batch, _ = _batch_then_dependant(as_curator, triangle)
    page = as_curator.post(f"/batches/{batch}/revert", {"next": "/audit/"}).content.decode()
    assert '<a class="button" href="/audit/">Cancel</a>' in page


def test_a_confirmed_batch_revert_reverts_the_dependant_too(as_curator, triangle):
    batch, later = _batch_then_dependant(as_curator, triangle)
    response = as_curator.post(f"/batches/{batch}/revert", {"cascade": "1", "next": "/audit/"})
    assert response["Location"] == "/audit/"
    reverted = AuditEntry.objects.filter(action="review.revert").values_list(
        "data__reverts", flat=True
    )
    assert later.pk in set(reverted)


def test_a_batch_revert_names_the_decisions_that_depend_on_it(curator, triangle):
    first, second, third = triangle
    result = services.decide_many(
        items=[f"d{first.pk}", f"d{second.pk}"], action="dismiss", actor=curator
    )
    later = services.decide(item=f"d{third.pk}", action="merge", actor=curator)
    with pytest.raises(services.RevertBlocked) as refused:
        services.revert_batch(batch=result.batch, actor=curator)
    assert refused.value.details == {"depends_on_this": [later.pk]}


def test_a_sweeps_application_is_not_reverted_as_a_batch(curator, dedup_settings):
    off = DedupConfig(enabled=False, near_threshold=0.9, entity_fuzzy=False)
    room = write.room_get_or_create(wing="legacy", room="notes")
    for content in (BASE, BASE):
        write.drawer_write(room=room, content=content, mode=write.WriteMode.MINED, config=off)
    run = sweep_services.execute(sweep_services.start(wing="legacy", threshold=0.9))
    applied = sweep_services.apply(run, threshold=0.9, actor=curator)
    with pytest.raises(services.RevertBlocked, match="reverse it from the sweep's page"):
        services.revert_batch(batch=applied.batch, actor=curator)


def test_an_unknown_batch_is_a_clear_message(as_curator):
    response = as_curator.post(f"/batches/{uuid.uuid4()}/revert", {"next": "/audit/"})
    assert response.status_code == 302
    assert "No decision in that batch" in as_curator.get("/audit/").content.decode()


def test_the_audit_log_offers_revert_batch_once_per_batch(as_curator, triangle):
    items = [f"d{link.pk}" for link in triangle]
    as_curator.post("/bulk", {"items": items, "action": "dismiss", "next": "/"})
    page = as_curator.get("/audit/").content.decode()
    assert page.count(">Revert batch</button>") == 1


# --- 4 ------------------------------------------------------------------------------------------


def test_every_item_of_a_filter_shows_its_reach_and_decides_nothing(as_curator, triangle):
    form = {"all_matching": "1", "filter": "", "action": "dismiss", "next": "/"}
    response = as_curator.post("/bulk", form)
    assert response.status_code == 200
    page = response.content.decode()
    assert "Dismiss 3 items?" in page
    assert "<strong>3</strong> drawer links" in page
    assert not AuditEntry.objects.exists()


def test_a_confirmation_for_another_reach_shows_the_reach_again(as_curator, triangle):
    form = {"all_matching": "1", "filter": "", "action": "dismiss", "next": "/"}
    token = as_curator.post("/bulk", form).context["token"]
    as_curator.post(f"/items/d{triangle[0].pk}/decide", {"action": "delete_link"})
    again = as_curator.post("/bulk", form | {"confirm": token})
    assert again.status_code == 200
    assert "Dismiss 2 items?" in again.content.decode()
    assert "other items than when you looked" in again.content.decode()
    assert AuditEntry.objects.count() == 1
    forged = as_curator.post("/bulk", form | {"confirm": "not-a-token"})
    assert forged.status_code == 200
    assert AuditEntry.objects.count() == 1


def test_sweep_apply_and_reverse_show_their_reach_first(as_curator, dedup_settings):
    off = DedupConfig(enabled=False, near_threshold=0.9, entity_fuzzy=False)
    room = write.room_get_or_create(wing="legacy", room="notes")
    for content in (BASE, BASE, BASE.upper()):
        write.drawer_write(room=room, content=content, mode=write.WriteMode.MINED, config=off)
    run = sweep_services.execute(sweep_services.start(wing="legacy", threshold=0.9))
    apply = {"action": "apply", "threshold": "0.9", "merge": "1"}
    response = as_curator.post(f"/sweeps/{run.pk}/", apply)
    assert response.status_code == 200
    reach = response.context["reach"]  # three copies: two merges, the third pair left nothing
    assert (reach["merge"], reach["grouped"]) == (run.proposals.count() - 1, 1)
    assert not run.proposals.exclude(status="proposed").exists()
    as_curator.post(f"/sweeps/{run.pk}/", {**apply, "merge": "", "confirm": "1"})
    assert run.proposals.filter(status="linked").count() == run.proposals.count()
    reverse = as_curator.post(f"/sweeps/{run.pk}/", {"action": "reverse"})
    assert reverse.context["reach"] == {
        "unlink": run.proposals.count(),
        "unmerge": 0,
        "propose_again": 0,
        "distinct_again": 0,
    }
    assert run.proposals.filter(status="linked").count() == run.proposals.count()
    assert SweepRun.objects.get().status == "done"


# --- 5 ------------------------------------------------------------------------------------------


def test_a_history_restore_gets_whole_pages(as_curator, drawer_link, entity_link):
    restore = {**HTMX, "HTTP_HX_HISTORY_RESTORE_REQUEST": "true"}
    assert b"<html" in as_curator.get("/", **restore).content
    assert b"<html" in as_curator.get(f"/items/d{drawer_link.pk}/", **restore).content
    assert b"<html" in as_curator.get("/audit/", **restore).content


def test_item_pages_are_never_cached_and_pages_vary_on_htmx(as_curator, entity_link):
    response = as_curator.get(f"/items/e{entity_link.pk}/")
    assert "no-store" in response["Cache-Control"]
    assert "HX-Request" in response["Vary"]
    assert "HX-Request" in as_curator.get("/")["Vary"]
    assert EntityLink.objects.get().status == "open"
