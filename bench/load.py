"""Load: N concurrent agent clients against gunicorn on PostgreSQL, over real HTTP, for a fixed
time, each with its own user and API token, writing a mix of new memories, exact copies, one-typo
variants and entity mentions. Prints throughput, p50/p99 latency and the count of 5xx answers (must
be 0) for the dedup write path, next to the same load as plain inserts through the same server.

The baseline is the same gunicorn, settings, endpoint, authentication, serializer, transaction
and response, started with CASTELLAN_DEDUP_ENABLED=false: every write is then stored without
candidate queries, verdicts or links, which is what a plain insert behind this API costs. The
difference between the two rows is the price of deduplication as an agent sees it. Each mode gets
a fresh database and a fresh server, so neither inherits the other's rows.

Loopback only, bounded in time: `.venv/bin/python bench/load.py [--clients 8] [--seconds 20]`.
The database is BENCH_POSTGRES_URL (default .../castellan_bench), dropped and created per mode.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import ROOT, Vocabulary, fresh_database_url, one_typo, percentile

MIX = (("new", 0.5), ("exact", 0.2), ("typo", 0.2), ("mention", 0.1))
ENTITIES = ["PostgreSQL", "Postgres", "SurrealDB", "SurealDB", "Redis", "gunicorn", "Gunicorn"]


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    server_errors: int = 0
    other_errors: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, seconds: float, status: int) -> None:
        with self.lock:
            self.latencies.append(seconds)
            if status >= 500:
                self.server_errors += 1
            elif status >= 400:
                self.other_errors += 1


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def server_env(database_url: str, port: int, dedup: bool) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "LANG", "TMPDIR"}},
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false",
        "BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": os.environ.get("WEB_CONCURRENCY", "2"),
        "GUNICORN_THREADS": os.environ.get("GUNICORN_THREADS", "4"),
        "CONN_MAX_AGE": "60",
        "CASTELLAN_DEDUP_ENABLED": "true" if dedup else "false",
        "CASTELLAN_LOG_LEVEL": "WARNING",
        # The agents write as fast as they can: no throttle in the way of the measurement.
        "CASTELLAN_WRITE_THROTTLE_RATE": "1000000/s",
    }


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if result.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{result.stderr}")
    return result.stdout


# Agents with a token each, made in one process (create_curator would ask for passwords).
MAKE_AGENTS = """
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
for n in range({count}):
    user, _ = User.objects.get_or_create(username=f"load-agent-{{n}}")
    print(Token.objects.get_or_create(user=user)[0].key)
"""


def agent_tokens(env: dict[str, str], count: int) -> list[str]:
    return manage(env, "shell", "--no-imports", "-c", MAKE_AGENTS.format(count=count)).split()


def wait_until_up(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("gunicorn exited")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.3)
    raise SystemExit("gunicorn did not answer")


def agent(port: int, token: str, seed: int, stop: float, tally: Tally) -> None:
    """One agent: its own keep-alive connection, writing until the clock says stop."""
    rng = random.Random(seed)
    vocabulary = Vocabulary(rng, size=2000)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    written: list[tuple[str, str]] = []  # (drawer id, content)
    while time.monotonic() < stop:
        kind = rng.choices([k for k, _ in MIX], weights=[w for _, w in MIX])[0]
        if kind != "new" and not written:
            kind = "new"
        if kind == "mention":
            path = f"/api/drawers/{rng.choice(written)[0]}/mentions"
            body: dict[str, str] = {"name": rng.choice(ENTITIES), "kind": "tool"}
        else:
            path = f"/api/wings/load/rooms/room-{rng.randrange(4)}/drawers"
            content = {
                "new": vocabulary.sentence,
                "exact": lambda: rng.choice(written)[1],
                "typo": lambda: one_typo(rng.choice(written)[1], rng),
            }[kind]()
            body = {"content": content}
        started = time.perf_counter()
        try:
            connection.request("POST", path, json.dumps(body), headers)
            response = connection.getresponse()
            answer = response.read()
        except (OSError, http.client.HTTPException):
            tally.add(time.perf_counter() - started, 599)
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            continue
        tally.add(time.perf_counter() - started, response.status)
        if kind != "mention" and response.status in (200, 201):
            written.append((json.loads(answer)["id"], body["content"]))
    connection.close()


def run(mode: str, clients: int, seconds: float) -> dict[str, str]:
    dedup = mode == "dedup"
    database_url = fresh_database_url("postgresql")
    port = free_port()
    env = server_env(database_url, port, dedup)
    manage(env, "migrate", "--noinput")
    tokens = agent_tokens(env, clients)
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--config", "config/gunicorn.py"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_up(port, process)
        tally = Tally()
        stop = time.monotonic() + seconds
        threads = [
            threading.Thread(target=agent, args=(port, token, n, stop, tally))
            for n, token in enumerate(tokens)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    count = len(tally.latencies)
    return {
        "server": "dedup write path" if dedup else "plain inserts (dedup off)",
        "clients": str(clients),
        "seconds": f"{seconds:.0f}",
        "requests": f"{count:,}",
        "requests/s": f"{count / seconds:.0f}",
        "p50 ms": f"{percentile(tally.latencies, 0.5) * 1000:.1f}",
        "p99 ms": f"{percentile(tally.latencies, 0.99) * 1000:.1f}",
        "5xx": str(tally.server_errors),
        "4xx": str(tally.other_errors),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20)
    args = parser.parse_args()
    rows = [run(mode, args.clients, min(args.seconds, 300)) for mode in ("dedup", "plain")]
    columns = list(rows[0])
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in columns}
    print("| " + " | ".join(c.ljust(widths[c]) for c in columns) + " |")
    print("|" + "|".join("-" * (widths[c] + 2) for c in columns) + "|")
    for row in rows:
        print("| " + " | ".join(row[c].ljust(widths[c]) for c in columns) + " |")
    if any(row["5xx"] != "0" for row in rows):
        raise SystemExit("server errors under load")


if __name__ == "__main__":
    main()
