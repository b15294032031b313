"""The admin's page of a sweep run: a run holds thousands of proposals, so its page shows the
first few (highest score first) and links to the rest, in the same queries however many."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from review.admin import ProposalInline
from review.models import Proposal, SweepRun

pytestmark = pytest.mark.django_db
CHANGE_LINK = re.compile(r"/admin/review/proposal/\d+/change/")


def proposals(run, count, start=0):
    Proposal.objects.bulk_create(
        Proposal(run=run, kind="drawer", tier="near", score=0.9 + (start + i) / 100_000)
        for i in range(count)
    )


def page(client, run):
    client.get(f"/admin/review/sweeprun/{run.pk}/change/")  # what a first request caches
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/admin/review/sweeprun/{run.pk}/change/")
    assert response.status_code == 200
    return response.content.decode(), len(queries)


def test_a_run_s_page_shows_its_first_proposals_and_links_to_the_rest(admin_client):
    run = SweepRun.objects.create(threshold=0.9, status="done")
    proposals(run, 5)
    few, few_queries = page(admin_client, run)
    assert len(CHANGE_LINK.findall(few)) == 5
    proposals(run, 1_000, start=5)
    many, many_queries = page(admin_client, run)
    assert many_queries == few_queries
    shown = ProposalInline.shown
    assert len(CHANGE_LINK.findall(many)) == shown
    best = run.proposals.order_by("-score", "pk").first()
    assert f"/admin/review/proposal/{best.pk}/change/" in many
    assert f"/admin/review/proposal/?run__id__exact={run.pk}" in many
    assert "all 1,005 proposals" in many
    assert len(many) < 100_000


def test_the_link_lists_the_run_s_proposals_only(admin_client):
    run, other = (SweepRun.objects.create(threshold=0.9, status="done") for _ in range(2))
    proposals(run, 3)
    proposals(other, 2, start=3)
    response = admin_client.get(f"/admin/review/proposal/?run__id__exact={run.pk}")
    assert response.status_code == 200
    assert response.context["cl"].result_count == 3
