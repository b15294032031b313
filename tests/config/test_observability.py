"""Watching it run: request ids, one log line per request (JSON on request), and /metrics."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from prometheus_client import REGISTRY
from pythonjsonlogger.json import JsonFormatter

from palace.models import Drawer
from review.models import SweepRun
from tests.conftest import person_client

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
URL = "/api/wings/notes/rooms/entries/drawers"
DECISION = "We decided to use SurrealDB for storage because one engine covers documents, graph and vectors."
TYPO = DECISION.replace("storage", "storge")
TOKEN = "scrape-token-for-tests"


def writes(verdict: str) -> float:
    return REGISTRY.get_sample_value("castellan_drawer_writes_total", {"verdict": verdict}) or 0.0


def write(api, content: str, capture):
    with capture(execute=True):
        return api.post(URL, {"content": content}, format="json")


def request_records(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "castellan.request"]


def test_a_request_id_is_generated_and_echoed(client):
    response = client.get("/healthz")
    assert len(response["X-Request-ID"]) == 32


def test_a_clients_request_id_is_kept(client):
    response = client.get("/healthz", HTTP_X_REQUEST_ID="trace-42.a")
    assert response["X-Request-ID"] == "trace-42.a"


def test_a_request_id_that_could_forge_a_log_line_is_replaced(client):
    response = client.get("/healthz", HTTP_X_REQUEST_ID="x\nlevel=ERROR")
    assert response["X-Request-ID"] != "x\nlevel=ERROR"
    assert len(response["X-Request-ID"]) == 32


# A real commit, as in production: the verdicts are tallied when the write commits, before the
# response is logged (a test transaction would hold them until the test ends).
@pytest.mark.django_db(transaction=True)
def test_a_write_logs_who_what_and_its_verdicts(
    api, user, caplog, django_capture_on_commit_callbacks
):
    caplog.set_level(logging.INFO, logger="castellan.request")
    write(api, DECISION, django_capture_on_commit_callbacks)
    caplog.clear()
    response = write(api, TYPO, django_capture_on_commit_callbacks)
    (record,) = request_records(caplog)
    assert record.request_id == response["X-Request-ID"]
    assert record.user == user.username
    assert record.method == "POST"
    assert record.path == URL
    assert record.status == 201
    assert record.duration_ms > 0
    assert record.verdicts == {"near": 1}


# A real commit, as in production (see above).
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("content", "verdict"),
    [(DECISION, "exact"), (DECISION.upper(), "normalized"), (TYPO, "near")],
    ids=["exact", "normalized", "near"],
)
def test_the_verdicts_are_logged_as_plain_values(
    api, caplog, django_capture_on_commit_callbacks, content, verdict
):
    caplog.set_level(logging.INFO, logger="castellan.request")
    write(api, DECISION, django_capture_on_commit_callbacks)
    caplog.clear()
    write(api, content, django_capture_on_commit_callbacks)
    (record,) = request_records(caplog)
    # Not the policy's enum, whose repr would read {<Verdict.EXACT: 'exact'>: 1}.
    assert [type(key) for key in record.verdicts] == [str]
    assert record.getMessage().endswith(f"verdicts={{'{verdict}': 1}}")


# A real commit, as in production: the verdicts are tallied when the write commits, before the
# response is logged (a test transaction would hold them until the test ends).
@pytest.mark.django_db(transaction=True)
def test_the_json_format_puts_every_field_in_one_object(
    api, caplog, django_capture_on_commit_callbacks
):
    caplog.set_level(logging.INFO, logger="castellan.request")
    write(api, DECISION, django_capture_on_commit_callbacks)
    (record,) = request_records(caplog)
    config = django_settings.LOGGING["formatters"]["json"]
    line = JsonFormatter(config["fmt"], rename_fields=config["rename_fields"]).format(record)
    logged = json.loads(line)
    assert logged["logger"] == "castellan.request"
    assert logged["level"] == "INFO"
    assert logged["status"] == 201
    assert logged["verdicts"] == {"new": 1}
    assert logged["request_id"] == record.request_id


def test_castellan_log_format_json_makes_every_line_json():
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "x" * 60,
        "CASTELLAN_LOG_FORMAT": "json",
    }
    script = (
        "import django, logging; django.setup(); logging.getLogger('castellan.x').warning('hi')"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    logged = json.loads(result.stderr.strip().splitlines()[-1])
    assert (logged["message"], logged["level"], logged["request_id"]) == ("hi", "WARNING", "")


def test_with_debug_on_a_django_info_line_is_written_once():
    """`make run` and a DEBUG db_worker printed "Watching for file changes with StatReloader"
    twice: Django's own console handler (DEBUG only) and ours, the record propagating to it."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "true"}
    env.pop("SECRET_KEY", None)
    script = (
        "import django, logging; django.setup(); "
        "logging.getLogger('django.utils.autoreload').info('Watching for file changes')"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].endswith("INFO django.utils.autoreload []: Watching for file changes")


def test_writes_are_counted_by_verdict_once_committed(api, django_capture_on_commit_callbacks):
    before = {v: writes(v) for v in ("new", "exact", "near", "normalized")}
    write(api, DECISION, django_capture_on_commit_callbacks)
    write(api, DECISION, django_capture_on_commit_callbacks)
    write(api, TYPO, django_capture_on_commit_callbacks)
    write(api, DECISION.upper(), django_capture_on_commit_callbacks)
    after = {v: writes(v) - before[v] for v in before}
    assert after == {"new": 1, "exact": 1, "near": 1, "normalized": 1}


def test_a_refused_write_counts_nothing(api, django_capture_on_commit_callbacks):
    before = sum(writes(v) for v in ("new", "exact", "near", "normalized"))
    response = write(api, "", django_capture_on_commit_callbacks)
    assert response.status_code == 400
    assert sum(writes(v) for v in ("new", "exact", "near", "normalized")) == before
    assert Drawer.objects.count() == 0


def test_mentions_are_counted_by_rule(api, django_capture_on_commit_callbacks):
    drawer = write(api, DECISION, django_capture_on_commit_callbacks).json()["id"]
    sample = ("castellan_entity_resolutions_total", {"rule": "distinct"})
    before = REGISTRY.get_sample_value(*sample) or 0.0
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            f"/api/drawers/{drawer}/mentions", {"name": "SurrealDB", "kind": "tool"}, format="json"
        )
    assert response.status_code == 201
    assert REGISTRY.get_sample_value(*sample) == before + 1


def test_metrics_are_not_found_without_a_token_setting(client, settings):
    settings.CASTELLAN_METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 404


def test_metrics_need_the_bearer_token(client, settings):
    settings.CASTELLAN_METRICS_TOKEN = TOKEN
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Token {TOKEN}").status_code == 404


def test_metrics_show_writes_requests_and_the_queue(
    api, client, settings, django_capture_on_commit_callbacks
):
    settings.CASTELLAN_METRICS_TOKEN = TOKEN
    write(api, DECISION, django_capture_on_commit_callbacks)
    write(api, TYPO, django_capture_on_commit_callbacks)
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    text = response.content.decode()
    assert 'castellan_drawer_writes_total{verdict="near"}' in text
    assert 'castellan_review_queue_open{kind="drawer"} 1.0' in text
    assert 'castellan_review_queue_open{kind="entity"} 0.0' in text
    assert (
        'castellan_http_requests_total{method="POST",status="201",view="api:room-drawers"}' in text
    )
    assert "castellan_http_request_duration_seconds_bucket" in text


def test_the_queue_gauge_costs_two_queries(client, settings, django_assert_num_queries):
    settings.CASTELLAN_METRICS_TOKEN = TOKEN
    with django_assert_num_queries(2):
        assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200


def console_line(record: logging.LogRecord) -> str:
    """The record as the configured console handler writes it (its filters applied)."""
    (console,) = [h for h in logging.getLogger().handlers if h.get_name() == "console"]
    assert console.filter(record)
    return console.format(record)


def django_records(caplog, logger: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == logger]


def test_djangos_warning_for_a_4xx_carries_the_request_id(api, caplog):
    """Django logs it once the middleware has returned, when the id is no longer current."""
    response = api.get("/api/nosuch", HTTP_X_REQUEST_ID="trace-404")
    assert response.status_code == 404
    (record,) = django_records(caplog, "django.request")
    assert console_line(record).endswith(
        "WARNING django.request [trace-404]: Not Found: /api/nosuch"
    )


def test_an_admin_403_is_one_line_at_warning(client, django_user_model, caplog):
    staff = django_user_model.objects.create_user("stan", password="pw-secret-1", is_staff=True)
    client.force_login(staff)
    response = client.get("/admin/auth/user/", HTTP_X_REQUEST_ID="trace-403")
    assert response.status_code == 403
    (record,) = django_records(caplog, "django.request")
    line = console_line(record)
    assert line.endswith(
        "WARNING django.request [trace-403]: Forbidden (Permission denied): /admin/auth/user/"
    )
    assert "\n" not in line
    assert record.exc_info is None


def test_a_disallowed_host_is_one_line_at_warning(client, caplog):
    response = client.get("/admin/", HTTP_HOST="evil.example", HTTP_X_REQUEST_ID="trace-host")
    assert response.status_code == 400
    (record,) = django_records(caplog, "django.security.DisallowedHost")
    # A warning already on its logger, before any handler (an error tracker among them) sees it.
    assert (record.levelname, record.exc_info) == ("WARNING", None)
    line = console_line(record)
    assert "WARNING django.security.DisallowedHost [trace-host]: Invalid HTTP_HOST" in line
    assert "\n" not in line


def test_a_server_error_keeps_its_traceback_and_level():
    try:
        raise RuntimeError("the database went away")
    except RuntimeError as error:
        record = logging.getLogger("django.request").makeRecord(
            "django.request",
            logging.ERROR,
            __file__,
            0,
            "Internal Server Error: %s",
            ("/api/wings",),
            (type(error), error, error.__traceback__),
            extra={"status_code": 500},
        )
    line = console_line(record)
    assert line.splitlines()[0].endswith(
        "ERROR django.request []: Internal Server Error: /api/wings"
    )
    assert "RuntimeError: the database went away" in line


def test_an_expected_refusal_is_the_request_line_with_its_code_not_a_warning(curator, caplog):
    """The operator's trial: every 409 an apply expectedly answers ("Nothing to apply") was a
    WARNING from django.request. The API's refusals (a domain error's code, an unknown id) are
    told by the request's own line, at INFO, with their code."""
    run = SweepRun.objects.create(threshold=0.9)  # queued: not done, so not applied
    client = person_client(curator)
    with caplog.at_level(logging.INFO):
        response = client.post(f"/api/sweeps/{run.pk}/apply", {"threshold": 1.0}, format="json")
        missing = client.get("/api/drawers/00000000-0000-4000-8000-000000000000")
    assert (response.status_code, missing.status_code) == (409, 404)
    assert django_records(caplog, "django.request") == []
    lines = [r.getMessage() for r in request_records(caplog)]
    assert lines[0].startswith(f"POST /api/sweeps/{run.pk}/apply 409")
    assert lines[0].endswith("code=run_not_done")
    assert lines[1].endswith("code=drawer_not_found")


def test_a_request_refused_for_its_input_is_still_a_warning(api, caplog):
    response = api.post(URL, {"content": ""}, format="json")
    assert response.status_code == 400
    (record,) = django_records(caplog, "django.request")
    assert record.levelname == "WARNING"
