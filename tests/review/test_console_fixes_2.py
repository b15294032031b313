"""The tester's console findings (production mode), at the view level: refusals answered in
place, stale CSRF tokens, the hold's renewal, action URLs opened with GET, and the cache."""

import pytest
from django.test import Client

from dedup import services as write
from palace.models import AuditEntry
from review import services
from review.models import ItemHold, Proposal
from review.services import ItemRef, sweeps
from tests.review.clusters_data import five_drawers
from tests.review.test_cluster_views import cluster_ref, form

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def stale_client(user) -> Client:
    """A client whose posts carry no valid CSRF token: a page older than the session."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


# --- 1: a cluster decided in another tab ------------------------------------------------------


@pytest.fixture
def decided_cluster(as_curator, dedup_settings):
    """A cluster's form as its page showed it, and the cluster then decided in another tab."""
    five_drawers()
    ref = cluster_ref()
    data, _ = form(ref)
    as_curator.post(f"/clusters/{ref}/decide", data)
    return ref, data


def test_a_cluster_decided_since_is_refused_as_changed(as_curator, decided_cluster):
    ref, data = decided_cluster
    response = as_curator.post(f"/clusters/{ref}/decide", data, **HTMX)
    assert response.status_code == 409


def test_a_cluster_decided_since_answers_htmx_a_fragment(as_curator, decided_cluster):
    ref, data = decided_cluster
    body = as_curator.post(f"/clusters/{ref}/decide", data, **HTMX).content.decode()
    assert "<html" not in body
    assert f"No open cluster holds {ref}" in body


# --- 2: a 403 on an htmx decision --------------------------------------------------------------


def test_a_forbidden_htmx_decision_answers_a_fragment(client, viewer, drawer_link):
    client.force_login(viewer)
    response = client.post(f"/items/d{drawer_link.pk}/decide", {"action": "merge"}, **HTMX)
    assert response.status_code == 403
    assert "<header" not in response.content.decode()


def test_a_forbidden_page_says_why_once(client, viewer, drawer_link):
    client.force_login(viewer)
    body = client.post(f"/items/d{drawer_link.pk}/decide", {"action": "merge"}).content.decode()
    assert "<header" in body
    assert body.count("permission") == 1


# --- 3: a stale CSRF token on a plain form ----------------------------------------------------


def test_a_stale_token_on_a_plain_form_shows_the_consoles_page(curator, drawer_link):
    client = stale_client(curator)
    item = f"/items/d{drawer_link.pk}/"
    response = client.post(
        f"{item}decide", {"action": "merge"}, HTTP_REFERER=f"http://testserver{item}"
    )
    body = response.content.decode()
    assert response.status_code == 403
    assert "DEBUG" not in body
    assert "nothing was done" in body
    assert f'href="{item}"' in body
    assert not AuditEntry.objects.exists()


@pytest.mark.parametrize("referer", ["https://evil.example/", "http://testserver//evil.example/x"])
def test_a_stale_token_page_never_links_off_site(curator, drawer_link, referer):
    response = stale_client(curator).post("/undo", HTTP_REFERER=referer)
    assert "evil.example" not in response.content.decode()


def test_undo_never_returns_off_site(as_curator):
    # Nothing to undo: back to the page `u` was pressed on, the Referer's, if it is ours.
    response = as_curator.post("/undo", HTTP_REFERER="http://testserver//evil.example/x")
    assert "evil.example" not in response["Location"]


# --- 4 and 5: the hold's background renewal ---------------------------------------------------


def test_a_renewal_with_a_stale_token_never_reloads_the_page(curator, drawer_link):
    response = stale_client(curator).post(f"/items/d{drawer_link.pk}/hold", **HTMX)
    assert "HX-Refresh" not in response
    assert "could not be renewed" in response.content.decode()
    assert "nothing was done" not in stale_client(curator).get("/").content.decode()


def test_a_renewal_after_the_session_ended_stays_on_the_page(client, drawer_link):
    response = client.post(f"/items/d{drawer_link.pk}/hold", **HTMX)
    assert "HX-Redirect" not in response
    assert "could not be renewed" in response.content.decode()


def test_a_renewal_on_an_item_decided_since_takes_no_hold(as_curator, curator, drawer_link):
    as_curator.get(f"/items/d{drawer_link.pk}/")  # the page takes the hold
    services.decide(item=ItemRef.parse(f"d{drawer_link.pk}"), action="dismiss", actor=curator)
    response = as_curator.post(f"/items/d{drawer_link.pk}/hold", **HTMX)
    assert "was decided meanwhile" in response.content.decode()
    assert not ItemHold.objects.exists()


def test_a_renewal_on_an_item_decided_since_stops_polling(as_curator, curator, drawer_link):
    services.decide(item=ItemRef.parse(f"d{drawer_link.pk}"), action="dismiss", actor=curator)
    response = as_curator.post(f"/items/d{drawer_link.pk}/hold", **HTMX)
    assert "hx-trigger" not in response.content.decode()


# --- 8: action URLs opened with GET ------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "page"),
    [("/preferences/shortcuts", "/"), ("/items/d1/hold", "/items/d1/")],
    ids=["shortcuts toggle", "hold renewal"],
)
def test_an_action_url_opened_with_get_goes_to_its_page(as_curator, url, page):
    assert as_curator.get(url)["Location"] == page


def test_logout_opened_with_get_shows_its_button(as_curator):
    response = as_curator.get("/accounts/logout/")
    assert response.status_code == 200
    assert "Log out</button>" in response.content.decode()


def test_logout_opened_with_get_logs_nobody_out(as_curator):
    as_curator.get("/accounts/logout/")
    assert as_curator.get("/").status_code == 200


# --- 9: Back shows the queue and the cluster as they are now -----------------------------------


@pytest.mark.parametrize("page", ["queue", "cluster", "batch"])
def test_pages_the_back_button_returns_to_are_not_cached(as_curator, dedup_settings, page):
    five_drawers()
    ref = cluster_ref()
    urls = {"queue": "/", "cluster": f"/clusters/{ref}/"}
    if page == "batch":
        response = as_curator.post(f"/clusters/{ref}/decide", form(ref)[0])
        urls["batch"] = response["Location"]
    assert "no-store" in as_curator.get(urls[page])["Cache-Control"]


# --- 6: Undo keeps the queue filter ----------------------------------------------------------


def test_undo_opens_the_item_in_the_filter_it_was_decided_in(as_curator, drawer_link):
    as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"})
    decision = AuditEntry.objects.get()
    response = as_curator.post("/undo", {"decision": decision.pk, "next": "/?type=drawer"})
    assert response["Location"] == f"/items/d{drawer_link.pk}/?type=drawer"


def test_u_opens_the_item_in_the_filter_of_the_page_it_was_pressed_on(as_curator, drawer_link):
    as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"})
    decision = AuditEntry.objects.get()
    response = as_curator.post(
        "/undo", {"decision": decision.pk}, HTTP_REFERER="http://testserver/?type=drawer"
    )
    assert response["Location"] == f"/items/d{drawer_link.pk}/?type=drawer"


def test_the_undo_offer_after_an_in_place_decision_returns_to_the_page_shown(as_curator, triangle):
    item = f"/items/d{triangle[0].pk}/"
    shown = f"http://testserver{item}?type=drawer"
    response = as_curator.post(
        f"{item}decide",
        {"action": "dismiss", "query": "type=drawer"},
        HTTP_HX_CURRENT_URL=shown,
        **HTMX,
    )
    assert f'name="next" value="{item}?type=drawer"' in response.content.decode()


# --- 15, 17, 19: the queue's bulk decision, invalid filters and the clusters link --------------

FACTS = [
    "The staging database is refreshed from an anonymised production dump every Monday.",
    "Backups run nightly at two in the morning and are kept for thirty days on the NAS.",
]


@pytest.fixture
def swept(curator):
    """A done sweep whose proposals are on the queue's `?run=` page."""
    off = write.DedupConfig(enabled=False, near_threshold=0.9, entity_fuzzy=False)
    room = write.room_get_or_create(wing="ops", room="runbooks")
    for fact in FACTS:
        for text in (fact, fact.replace("nightly", "nigthly").replace("dump", "dupm")):
            write.drawer_write(room=room, content=text, mode=write.WriteMode.MINED, config=off)
    return sweeps.execute(sweeps.start(threshold=0.9))


def test_bulk_on_a_sweeps_proposals_offers_their_judgements(as_curator, swept):
    body = as_curator.get("/", {"run": swept.pk}).content.decode()
    assert '<option value="same">' in body
    assert '<option value="dismiss">' not in body


def test_bulk_judges_a_sweeps_proposals(as_curator, swept):
    items = [f"p{pk}" for pk in Proposal.objects.values_list("pk", flat=True)]
    as_curator.post("/bulk", {"items": items, "action": "wrong", "next": "/"})
    assert set(Proposal.objects.values_list("verdict", flat=True)) == {"wrong"}


def test_an_invalid_queue_filter_shows_no_counts(as_curator, drawer_link):
    response = as_curator.get("/", {"min_similarity": "0.9", "max_similarity": "0.1"})
    assert response.status_code == 400
    assert "drawer link" not in response.content.decode()


def test_group_into_clusters_names_the_type_once(as_curator, drawer_link):
    body = as_curator.get("/", {"type": "drawer", "wing": "ops"}).content.decode()
    assert 'href="?wing=ops&amp;type=cluster"' in body


# --- 18: an invalid audit filter lists and exports nothing --------------------------------------


@pytest.mark.parametrize("export", ["csv", "json"])
def test_an_invalid_audit_filter_exports_nothing(as_curator, drawer_link, export):
    as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"})
    response = as_curator.get("/audit/", {"since": "2026-13-01", "format": export})
    assert response.status_code == 400
    assert "Content-Disposition" not in response


def test_an_invalid_audit_filter_lists_nothing(as_curator, drawer_link):
    as_curator.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"})
    response = as_curator.get("/audit/", {"since": "2026-13-01"})
    assert response.context["entries"] == []


def test_no_merge_is_offered_when_a_drawer_is_superseded(as_curator, drawer_link):
    write.drawer_supersede(drawer=drawer_link.older)
    page = as_curator.get(f"/items/d{drawer_link.pk}/").content.decode()
    assert 'value="merge"' not in page
    assert "the older drawer is superseded already" in page


def test_merge_is_offered_when_both_drawers_are_current(as_curator, drawer_link):
    page = as_curator.get(f"/items/d{drawer_link.pk}/").content.decode()
    assert 'value="merge"' in page
