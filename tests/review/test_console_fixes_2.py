"""The tester's console findings (production mode), at the view level: refusals answered in
place, stale CSRF tokens, the hold's renewal, action URLs opened with GET, and the cache."""

import pytest

from tests.review.clusters_data import five_drawers
from tests.review.test_cluster_views import cluster_ref, form

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


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
