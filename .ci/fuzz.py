"""Fuzz the live API with schemathesis: every response must match the OpenAPI schema.

A fresh database (a temporary SQLite file, or FUZZ_DATABASE_URL: that PostgreSQL database is
dropped and created anew), the demo palace and a finished
sweep so that paths with ids are reachable, a curator's token, the app served by `runserver`
with DEBUG off, then schemathesis against `/api/schema/`: bounded (FUZZ_MAX_EXAMPLES per
operation, FUZZ_MAX_TIME seconds in all), failing on any 5xx, undocumented status code, body that
does not match its schema, or wrong content type. The ids the seed made are offered to the
fuzzer as a dictionary for the path parameters, half of the time, beside generated ones.

Run it with `make fuzz`; FUZZ_ARGS passes extra options to `schemathesis run`.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
SCHEMATHESIS = str(Path(PYTHON).with_name("schemathesis"))
CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "response_schema_conformance",
        "content_type_conformance",
    ]
)

SEED = """
import json
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from palace.models import Drawer, Entity
from review.models import SweepRun
from review.services import sweeps
from review.tasks import run_sweep
from palace.models import AuditEntry

call_command("seed_demo", "--no-progress")
run = sweeps.start(wing="castellan", room="", threshold=0.9, same_kind=True, entities=False,
                   actor=None)
run_sweep.call(run.pk)
print(json.dumps({
    "token": Token.objects.get(user__username="curator").key,
    "drawer_id": [str(u) for u in Drawer.objects.values_list("uuid", flat=True)[:20]],
    "entity_id": [str(u) for u in Entity.objects.values_list("uuid", flat=True)[:20]],
    "run_id": list(SweepRun.objects.values_list("pk", flat=True)),
    "decision_id": list(AuditEntry.objects.values_list("pk", flat=True)[:20]) or [1],
}))
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fresh_database(url: str) -> None:
    """Drop and create the PostgreSQL database the URL names (SQLite files start fresh)."""
    parts = urlsplit(url)
    if not parts.scheme.startswith("postgres"):
        return
    name = parts.path.lstrip("/")
    maintenance = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(maintenance, autocommit=True) as connection:
        connection.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


def config(seeded: dict, token: str) -> str:
    """A schemathesis.toml: the token, and the seeded ids as dictionaries for path parameters."""
    lines = [f'headers = {{ Authorization = "Token {token}" }}', ""]
    bindings = []
    for name in ("drawer_id", "entity_id", "run_id", "decision_id"):
        values = ", ".join(json.dumps(value) for value in seeded[name])
        lines += [f"[dictionaries.{name}]", f"values = [{values}]", ""]
        bindings.append(f'"path.{name}" = {{ dictionary = "{name}", probability = 0.5 }}')
    return "\n".join([*lines, "[parameters]", *bindings, ""])


def wait_for(url: str, server: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit("The app stopped before it answered.")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.5)
    sys.exit(f"The app did not answer at {url}.")


def main() -> int:
    workdir = Path(tempfile.mkdtemp(prefix="castellan-fuzz-"))
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": os.environ.get("FUZZ_DATABASE_URL", f"sqlite:///{workdir}/fuzz.sqlite3"),
        "DEBUG": "false",
        "SECRET_KEY": "fuzz-only-" + secrets.token_urlsafe(32),
        "ALLOWED_HOSTS": "127.0.0.1",
        "CASTELLAN_WRITE_THROTTLE_RATE": "100000/min",
        "SECURE_SSL_REDIRECT": "false",
        "CASTELLAN_LOG_LEVEL": "WARNING",
    }
    fresh_database(env["DATABASE_URL"])
    manage(env, "migrate", "--noinput")
    seeded = json.loads(manage(env, "shell", "-c", SEED).strip().splitlines()[-1])
    (workdir / "schemathesis.toml").write_text(config(seeded, seeded["token"]))

    server = subprocess.Popen(
        [PYTHON, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(workdir / "server.log", "w"),  # noqa: SIM115
    )
    schema = f"http://127.0.0.1:{port}/api/schema/?format=json"
    try:
        wait_for(schema, server)
        command = [
            SCHEMATHESIS,
            "--config-file",
            str(workdir / "schemathesis.toml"),
            "run",
            schema,
            "--checks",
            CHECKS,
            "--phases",
            "examples,coverage,fuzzing",
            "--max-examples",
            os.environ.get("FUZZ_MAX_EXAMPLES", "60"),
            "--max-time",
            os.environ.get("FUZZ_MAX_TIME", "300"),
            "--workers",
            # One worker: schemathesis's coverage phase is not thread-safe on Python 3.11 (an
            # internal SystemError was seen with two).
            os.environ.get("FUZZ_WORKERS", "1"),
            "--seed",
            os.environ.get("FUZZ_SEED", "1"),
            "--generation-database",
            "none",
            "--suppress-health-check",
            "all",
            "--continue-on-failure",
            "--no-color",
            *shlex.split(os.environ.get("FUZZ_ARGS", "")),
        ]
        print("$", " ".join(command), flush=True)
        return subprocess.run(command, cwd=workdir).returncode
    finally:
        server.terminate()
        server.wait(timeout=30)
        print(f"(app log: {workdir / 'server.log'})")


if __name__ == "__main__":
    sys.exit(main())
