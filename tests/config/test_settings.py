"""Settings come from the environment, and a bad dedup setting stops the app at start-up."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


PRODUCTION_KEY = "x" * 64 + "-a-long-random-production-secret-key"


def manage(*args: str, **env: str | None) -> subprocess.CompletedProcess:
    """manage.py with production settings; a SECRET_KEY unless the test passes its own."""
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": PRODUCTION_KEY,
        **env,
    }
    environment = {name: value for name, value in environment.items() if value is not None}
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


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("0.49", "below 0.5 distinct facts would be linked"),
        ("1.01", "above 1 nothing could be linked"),
        ("0,9", "it is not a number"),
    ],
)
def test_a_refused_near_threshold_says_why(value, why):
    assert why in manage("check", CASTELLAN_DEDUP_NEAR_THRESHOLD=value).stderr


@pytest.mark.parametrize(
    "value", ["abc", "100/fortnight", "0/min", "-5/s", "1.5/s", "100", "²/s", "\uff11/s"]
)
def test_a_write_rate_drf_cannot_read_refuses_to_start(value):
    result = manage("check", CASTELLAN_WRITE_THROTTLE_RATE=value)
    assert result.returncode != 0
    assert "CASTELLAN_WRITE_THROTTLE_RATE must be a number of requests per" in result.stderr


@pytest.mark.parametrize("value", ["100/s", "1200/min", "5/hour", "50000/day"])
def test_a_write_rate_drf_reads_starts(value):
    result = manage("check", CASTELLAN_WRITE_THROTTLE_RATE=value)
    assert result.returncode == 0, result.stderr


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
        SECRET_KEY=PRODUCTION_KEY,
        ALLOWED_HOSTS="castellan.example.org",
    )
    assert result.returncode == 0, result.stderr + result.stdout


@pytest.mark.parametrize(
    "key",
    [None, "", "  ", "django-insecure-castellan-development-key-change-me"],
    ids=["unset", "empty", "blank", "development key"],
)
def test_debug_off_without_a_real_secret_key_refuses_to_start(key):
    result = manage("check", DEBUG="false", SECRET_KEY=key)
    assert result.returncode != 0
    assert "SECRET_KEY is missing or is the public development key, and DEBUG is off" in (
        result.stderr
    )


def test_debug_on_runs_on_the_development_key():
    result = manage(
        "shell",
        "-c",
        "from django.conf import settings; print(settings.SECRET_KEY)",
        DEBUG="true",
        SECRET_KEY=None,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1].startswith("django-insecure-")


def test_static_files_are_hashed_and_compressed_in_production_only():
    script = "from django.conf import settings; print(settings.STORAGES['staticfiles']['BACKEND'])"
    production = manage("shell", "-c", script, DEBUG="false")
    development = manage("shell", "-c", script, DEBUG="true")
    assert production.stdout.strip().splitlines()[-1] == (
        "whitenoise.storage.CompressedManifestStaticFilesStorage"
    )
    assert development.stdout.strip().splitlines()[-1] == (
        "django.contrib.staticfiles.storage.StaticFilesStorage"
    )


def sqlite_pragmas(path: Path, **env: str) -> list[str]:
    """journal_mode, synchronous and mmap_size of the app's own connection to a SQLite file."""
    result = manage(
        "shell",
        "-c",
        "from django.db import connection; c = connection.cursor(); print(*(c.execute("
        "f'PRAGMA {p}').fetchone()[0] for p in ('journal_mode', 'synchronous', 'mmap_size')))",
        DATABASE_URL=f"sqlite:///{path}",
        **env,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1].split()


def test_sqlite_connections_run_in_wal_with_memory_mapped_reads(tmp_path):
    journal, synchronous, mmap_size = sqlite_pragmas(tmp_path / "db.sqlite3")
    assert journal == "wal"
    assert synchronous == "1"  # NORMAL
    # SQLite's own cap (2 GiB less 64 KiB on Linux builds) sits just below the default.
    assert int(mmap_size) >= 2**31 - 2**16


def test_sqlite_mmap_size_zero_turns_it_off(tmp_path):
    assert sqlite_pragmas(tmp_path / "db.sqlite3", SQLITE_MMAP_SIZE="0")[2] == "0"


@pytest.mark.parametrize("value", ["-1", "lots", "1.5"])
def test_sqlite_mmap_size_nonsense_refuses_to_start(value, tmp_path):
    result = manage(
        "check", SQLITE_MMAP_SIZE=value, DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}"
    )
    assert result.returncode != 0
    assert "SQLITE_MMAP_SIZE must be a whole number of 0 or more" in result.stderr


def test_the_api_answers_json_only_with_debug_on_too():
    """No browsable API in development: an HTML Accept is 406 there as in production."""
    result = manage(
        "shell",
        "-c",
        "from django.conf import settings; print(settings.REST_FRAMEWORK['DEFAULT_RENDERER_CLASSES'])",
        DEBUG="true",
        SECRET_KEY=None,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "['rest_framework.renderers.JSONRenderer']"


def test_a_setting_the_environment_got_wrong_is_one_line_not_a_traceback():
    """`manage.py agent_key --help` after `make run` (DEBUG unset, no SECRET_KEY)."""
    result = manage("agent_key", "--help", SECRET_KEY=None, DEBUG=None)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("Castellan cannot start: SECRET_KEY is missing")
    assert "set DEBUG=true on a development machine" in result.stderr
