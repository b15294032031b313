"""The sweep's page while a worker applies or reverses it: the POST redirects at once, the page
says "Applying…" and follows the job by htmx polling (a partial while it is under way, a
refresh once it is done), then shows the outcome; a failure is shown with its error, and a
second Apply or Reverse meanwhile is refused with a message."""

import pytest

from review.models import SweepJob
from review.services import sweep_apply
from review.services import sweeps as sweep_services
from tests.review.test_sweep_jobs import swept, work  # noqa: F401
from tests.review.test_sweeps import palace  # noqa: F401

# Transactions of their own: `db_worker` closes its connection after a task, which ends the
# transaction a test would otherwise run in (on PostgreSQL).
pytestmark = pytest.mark.django_db(transaction=True)

APPLY = {"action": "apply", "confirm": "1", "threshold": "0.9", "merge": "1"}
REVERSE = {"action": "reverse", "confirm": "1"}


def page_of(client, run) -> str:
    return client.get(f"/sweeps/{run.pk}/").content.decode()


def test_apply_redirects_to_the_page_at_once(as_curator, swept):  # noqa: F811
    response = as_curator.post(f"/sweeps/{swept.pk}/", APPLY)
    assert response.status_code == 302
    assert response["Location"] == f"/sweeps/{swept.pk}/"
    assert SweepJob.objects.get().status == "queued"


def test_the_page_says_applying_and_polls(as_curator, swept):  # noqa: F811
    as_curator.post(f"/sweeps/{swept.pk}/", APPLY)
    page = page_of(as_curator, swept)
    assert "Applying…" in page
    assert 'hx-trigger="every 2s"' in page
    assert "Apply queued" in page  # the flash


def test_the_page_offers_no_apply_or_reverse_meanwhile(as_curator, swept):  # noqa: F811
    as_curator.post(f"/sweeps/{swept.pk}/", APPLY)
    page = page_of(as_curator, swept)
    assert 'value="apply"' not in page
    assert 'value="reverse"' not in page


def test_the_poll_gets_the_partial_while_the_job_is_under_way(as_curator, swept):  # noqa: F811
    as_curator.post(f"/sweeps/{swept.pk}/", APPLY)
    partial = as_curator.get(f"/sweeps/{swept.pk}/", HTTP_HX_REQUEST="true")
    assert "HX-Refresh" not in partial
    assert b"<html" not in partial.content
    assert "Applying…" in partial.content.decode()


def test_the_poll_refreshes_the_page_once_it_is_done(as_curator, swept):  # noqa: F811
    as_curator.post(f"/sweeps/{swept.pk}/", APPLY)
    work()
    partial = as_curator.get(f"/sweeps/{swept.pk}/", HTTP_HX_REQUEST="true")
    assert partial["HX-Refresh"] == "true"


def test_the_page_shows_the_outcome_once_done(as_curator, swept):  # noqa: F811
    as_curator.post(f"/sweeps/{swept.pk}/", APPLY)
    work()
    page = page_of(as_curator, swept)
    applied = SweepJob.objects.get().result
    assert f"Applied: {applied['explained']} (batch {applied['batch']})." in page
    assert "Applying…" not in page
    assert 'hx-trigger="every 2s"' not in page


def test_reverse_is_followed_the_same_way(as_curator, swept, curator):  # noqa: F811
    sweep_services.apply(swept, threshold=0.9, actor=curator)
    as_curator.post(f"/sweeps/{swept.pk}/", REVERSE)
    assert "Reversing…" in page_of(as_curator, swept)
    work()
    undone = SweepJob.objects.get().result["undone"]
    assert f"Reversed: {undone} undone." in page_of(as_curator, swept)


def test_a_second_apply_meanwhile_is_refused_with_a_message(as_curator, swept):  # noqa: F811
    as_curator.post(f"/sweeps/{swept.pk}/", APPLY)
    page = as_curator.post(f"/sweeps/{swept.pk}/", APPLY, follow=True).content.decode()
    assert "an apply is queued" in page
    assert SweepJob.objects.count() == 1


def test_a_refusal_known_up_front_is_a_message_and_no_job(as_curator, swept):  # noqa: F811
    page = as_curator.post(f"/sweeps/{swept.pk}/", REVERSE, follow=True).content.decode()
    assert "Nothing of this sweep is applied" in page
    assert not SweepJob.objects.exists()


def test_a_failed_job_is_shown_with_its_error(as_curator, swept, monkeypatch):  # noqa: F811
    def crash(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(sweep_apply, "_apply_one", crash)
    as_curator.post(f"/sweeps/{swept.pk}/", APPLY)
    work()
    page = page_of(as_curator, swept)
    assert "Apply failed: RuntimeError: disk on fire Nothing of it was done." in page
    assert 'value="apply"' in page  # to try again


def test_the_page_reads_the_job_in_a_bounded_number_of_queries(
    as_curator,
    swept,  # noqa: F811
    django_assert_max_num_queries,
):
    as_curator.post(f"/sweeps/{swept.pk}/", APPLY)
    with django_assert_max_num_queries(30):
        as_curator.get(f"/sweeps/{swept.pk}/", HTTP_HX_REQUEST="true")
