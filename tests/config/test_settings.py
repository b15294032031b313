"""Settings come from the environment, and a bad dedup setting stops the app at start-up."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **env}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize("value", ["0.49", "1.01", "-1", "abc", "nan", "0,9"])
def test_near_threshold_outside_range_or_not_a_number_refuses_to_start(value):
    result = manage("check", CASTELLAN_DEDUP_NEAR_THRESHOLD=value)
    assert result.returncode != 0
    assert "CASTELLAN_DEDUP_NEAR_THRESHOLD must be a number from 0.5 to 1" in result.stderr


@pytest.mark.parametrize("value", ["0.5", "1", "0.95"])
def test_near_threshold_bounds_are_inclusive(value):
    result = manage(
        "shell",
        "-c",
        "from django.conf import settings; print(settings.CASTELLAN_DEDUP_NEAR_THRESHOLD)",
        CASTELLAN_DEDUP_NEAR_THRESHOLD=value,
    )
    assert result.returncode == 0, result.stderr
    assert float(result.stdout.strip().splitlines()[-1]) == float(value)


def test_booleans_are_parsed_and_nonsense_refused():
    ok = manage(
        "shell",
        "-c",
        "from django.conf import settings; print(settings.CASTELLAN_DEDUP_ENABLED, settings.CASTELLAN_DEDUP_ENTITY_FUZZY)",
        CASTELLAN_DEDUP_ENABLED="false",
        CASTELLAN_DEDUP_ENTITY_FUZZY="0",
    )
    assert ok.stdout.strip().splitlines()[-1] == "False False"
    bad = manage("check", CASTELLAN_DEDUP_ENABLED="maybe")
    assert bad.returncode != 0
    assert "CASTELLAN_DEDUP_ENABLED must be true or false" in bad.stderr


def test_defaults(settings):
    from django.conf import settings as live

    assert live.CASTELLAN_DEDUP_ENABLED is True
    assert live.CASTELLAN_DEDUP_NEAR_THRESHOLD == 0.9
    assert live.CASTELLAN_DEDUP_ENTITY_FUZZY is True
    assert live.CASTELLAN_MAX_CONTENT_BYTES == 1024 * 1024


def test_check_deploy_is_clean_with_production_environment():
    result = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="false",
        SECRET_KEY="x" * 64 + "-a-long-random-production-secret-key",
        ALLOWED_HOSTS="castellan.example.org",
    )
    assert result.returncode == 0, result.stderr + result.stdout
