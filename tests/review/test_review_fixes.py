"""What a fresh read of the merged console found: each a test that failed before its fix."""

import pytest

from dedup.errors import InvalidInput
from palace.models import AuditEntry, DrawerLink
from review import services
from review.models import ItemHold
from review.selectors import sweeps as sweep_selectors
from review.services import sweeps as sweep_services
from tests.review.clusters_data import five_drawers
from tests.review.test_sweep_apply_outcomes import judge_wrong, run  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_a_bad_filter_carried_by_the_item_page_does_not_fail_the_decision(as_curator, drawer_link):
    """A stale bookmark's `order=bogus` was copied into the form and failed after the commit."""
    item = f"d{drawer_link.pk}"
    response = as_curator.post(
        f"/items/{item}/decide", {"action": "dismiss", "query": "order=bogus"}, **HTMX
    )
    assert response.status_code in (200, 204)
    drawer_link.refresh_from_db()
    assert drawer_link.status == "dismissed"


@pytest.mark.parametrize("links", ["²", "9" * 30, "1,abc,-3"])
def test_a_forged_cluster_links_field_is_refused_not_a_500(as_curator, dedup_settings, links):
    restatements = [drawer.pk for drawer in five_drawers()]
    first = DrawerLink.objects.filter(newer__in=restatements, status="open").order_by("pk")[0]
    response = as_curator.post(f"/clusters/d{first.pk}/decide", {"links": links})
    assert response.status_code < 500


def test_an_open_proposal_is_held_by_the_curator_who_opens_it(as_curator, run, curator):  # noqa: F811
    proposal = run.proposals.order_by("pk").first()
    as_curator.get(f"/items/p{proposal.pk}/")
    assert ItemHold.objects.filter(item=f"p{proposal.pk}", curator=curator).exists()


def test_the_apply_reach_counts_what_apply_does(run, curator):  # noqa: F811
    """A "not the same" verdict is recorded distinct at any score; other tiers are kept."""
    (judged,) = judge_wrong(run, curator, 1)
    others = sorted({p.tier for p in run.proposals.all()} - {judged.tier})  # not the judged tier
    options = {"threshold": 0.9, "tiers": others, "merge_tiers": (), "discard_below": False}
    reach = sweep_selectors.apply_reach(run, **options)
    applied = sweep_services.apply(run, actor=curator, **options)
    assert reach["distinct"] == applied.distinct == 1


@pytest.mark.parametrize("threshold", [float("nan"), float("inf"), 0.2])
def test_a_sweep_applies_only_at_a_threshold_in_range(run, curator, threshold):  # noqa: F811
    with pytest.raises(InvalidInput):
        sweep_services.apply(run, threshold=threshold, actor=curator)
    assert not AuditEntry.objects.filter(action="sweep.apply").exists()


def test_the_bulk_confirmation_never_links_off_site(as_curator, drawer_link):
    form = {"all_matching": "1", "filter": "", "action": "dismiss", "next": "javascript:alert(1)"}
    page = as_curator.post("/bulk", form).content.decode()
    assert 'href="javascript:' not in page  # the Cancel link


def test_a_batch_revert_twice_reverts_once(curator, drawer_link):
    result = services.decide_many(items=[f"d{drawer_link.pk}"], action="dismiss", actor=curator)
    services.revert_batch(batch=result.batch, actor=curator)
    with pytest.raises(services.AlreadyDecided) as refused:
        services.revert_batch(batch=result.batch, actor=curator)
    assert refused.value.code == "already_reverted"


def test_a_cluster_decision_reached_by_get_shows_the_cluster(as_curator, dedup_settings):
    restatements = [drawer.pk for drawer in five_drawers()]
    first = DrawerLink.objects.filter(newer__in=restatements, status="open").order_by("pk")[0]
    response = as_curator.get(f"/clusters/d{first.pk}/decide")
    assert response.status_code == 302
    assert response["Location"] == f"/clusters/d{first.pk}/"


def test_a_cluster_decision_without_a_session_returns_to_the_cluster_after_login(
    client, dedup_settings
):
    restatements = [drawer.pk for drawer in five_drawers()]
    first = DrawerLink.objects.filter(newer__in=restatements, status="open").order_by("pk")[0]
    response = client.post(f"/clusters/d{first.pk}/decide", {"links": str(first.pk)}, **HTMX)
    assert f"next=/clusters/d{first.pk}/" in response["HX-Redirect"]


def test_a_session_that_ended_is_said_on_the_login_page_itself(client, drawer_link, curator):
    """A curator's trial: htmx took the curator to a login page that said nothing; the
    message came only after logging in. It is said there, and again on the item."""
    response = client.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"}, **HTMX)
    login = client.get(response["HX-Redirect"]).content.decode()
    assert "Your session had ended, so your dismiss" in login
    client.force_login(curator)
    item = client.get(f"/items/d{drawer_link.pk}/").content.decode()
    assert "Your session had ended, so your dismiss" in item
    client.logout()
    queue = client.get("/?page=2", **HTMX)
    login = client.get(queue["HX-Redirect"]).content.decode()
    assert "Your session had ended: log in again to go on." in login
