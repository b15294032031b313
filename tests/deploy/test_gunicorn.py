"""Castellan as a team deploys it: gunicorn with production settings (DEBUG off, a real key, the
HTTPS redirect on behind a TLS proxy) on a fresh PostgreSQL database, after `migrate` and
`collectstatic`, driven over real HTTP and in headless Chromium.

Runs when DATABASE_URL names PostgreSQL (the database of the run is left alone: a sibling
`<name>_deploy` is created and dropped) and Debian's chromium is installed; skipped otherwise.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path

import dj_database_url
import pytest

from tests.browser.conftest import ARGS, CHROMIUM
from tests.raw_http import exchange, free_port, read_answer

pytestmark = [pytest.mark.browser, pytest.mark.postgres_only]

ROOT = Path(__file__).resolve().parents[2]
# What the TLS proxy in front of gunicorn adds to every request it forwards.
PROXIED = {"X-Forwarded-Proto": "https"}
METRICS_TOKEN = secrets.token_urlsafe(24)
BODY_TIMEOUT = 2  # seconds (30 by default): short, for the test of a body that stops coming
HEAD_TIMEOUT = 2  # seconds (10 by default): short, for the test of a head that stops coming


@dataclass(frozen=True)
class Server:
    url: str
    env: dict[str, str]
    log: Path  # gunicorn's stdout: the access log
    errors: Path  # gunicorn's stderr: its own messages and the app's (JSON) log lines
    static_root: Path


def log_holds(log: Path, pattern: str, wait: float = 10) -> bool:
    """Whether the log has a line matching `pattern`, read until `wait` seconds have passed: a
    worker writes its access line after the answer, so a busy machine may not have yet."""
    deadline = time.monotonic() + wait
    while re.search(pattern, log.read_text()) is None:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def get(
    url: str, headers: dict[str, str] | None = None, data: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One request (a POST when there is data), redirects not followed: (status, headers, body)."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(url, headers=headers or {}, data=data)
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def postgres_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        pytest.skip("needs PostgreSQL: run with DATABASE_URL=postgres://...")
    return url


def run_sql(url: str, sql: str) -> None:
    import psycopg

    config = dj_database_url.parse(url)
    with psycopg.connect(
        host=config["HOST"] or None,
        port=config["PORT"] or None,
        user=config["USER"] or None,
        password=config["PASSWORD"] or None,
        # The server's maintenance database, as Django's own test runner uses to create one.
        dbname="postgres",
        autocommit=True,
    ) as connection:
        connection.execute(sql)


def manage(server_env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=server_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"manage.py {' '.join(args)}:\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def fresh_database() -> Iterator[str]:
    url = postgres_url()
    name = dj_database_url.parse(url)["NAME"] + "_deploy"
    try:
        run_sql(url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        run_sql(url, f'CREATE DATABASE "{name}"')
    except Exception as error:  # psycopg.OperationalError: no server to talk to
        pytest.skip(f"PostgreSQL does not answer: {error}")
    yield url.rsplit("/", 1)[0] + "/" + name
    run_sql(url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def server(fresh_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """gunicorn as the Procfile starts it, with a production environment and nothing else, after
    `collectstatic` and before `migrate`."""
    port = free_port()
    work = tmp_path_factory.mktemp("deploy")
    inherited = {k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "LANG", "TMPDIR"}}
    env = {
        **inherited,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": fresh_database,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "localhost",
        # The browser speaks plain HTTP to gunicorn while the proxy header says HTTPS: its
        # Origin is http://, so trust that one origin, as a deployment trusts its public one.
        "CSRF_TRUSTED_ORIGINS": f"http://localhost:{port}",
        "STATIC_ROOT": str(work / "static"),
        "BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "2",
        "GUNICORN_THREADS": "2",
        "PYTHONUNBUFFERED": "1",
        "CASTELLAN_LOG_FORMAT": "json",
        "CASTELLAN_METRICS_TOKEN": METRICS_TOKEN,
        "GUNICORN_BODY_TIMEOUT": str(BODY_TIMEOUT),
        "GUNICORN_HEAD_TIMEOUT": str(HEAD_TIMEOUT),
    }
    # Built before gunicorn starts: WhiteNoise indexes STATIC_ROOT when a worker boots.
    manage(env, "collectstatic", "--noinput")
    log, errors = work / "gunicorn.out", work / "gunicorn.err"
    with log.open("w") as output, errors.open("w") as error_output:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--config", "config/gunicorn.py"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=error_output,
        )
    url = f"http://localhost:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, f"gunicorn exited:\n{errors.read_text()}"
            try:
                if get(f"{url}/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"gunicorn did not answer:\n{errors.read_text()}"
            time.sleep(0.3)
        yield Server(url=url, env=env, log=log, errors=errors, static_root=work / "static")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=40)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def deployed(server: Server) -> Server:
    """The release step of the README, run while gunicorn already serves: readyz says 503 until
    `migrate` has run, then 200."""
    status, _, body = get(f"{server.url}/readyz")
    assert status == 503
    answer = json.loads(body)
    assert answer["status"] == "unavailable"
    assert answer["database"] == "ok"
    assert "palace.0001_initial" in answer["unapplied_migrations"]

    manage(server.env, "migrate", "--noinput")
    manage(server.env, "seed_demo")
    return server


@pytest.fixture
def page(deployed: Server) -> Iterator:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"Chromium is not installed at {CHROMIUM}; .ci/run installs it.")
        pytest.skip("Chromium is not installed (apt-get install chromium); browser steps skipped.")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        context = browser.new_context(extra_http_headers=PROXIED)
        page = context.new_page()
        page.set_default_timeout(20_000)
        yield page
        browser.close()


def test_health_checks_answer_over_plain_http_without_login(deployed: Server):
    """A load balancer probes gunicorn directly: no TLS, no proxy header, no session."""
    status, headers, body = get(f"{deployed.url}/healthz")
    assert (status, json.loads(body)) == (200, {"status": "ok"})
    assert "no-cache" in headers["Cache-Control"]
    status, _, body = get(f"{deployed.url}/readyz")
    assert (status, json.loads(body)) == (200, {"status": "ok", "database": "ok"})
    # Everything else is redirected to HTTPS when the request did not come through the proxy.
    status, headers, _ = get(f"{deployed.url}/accounts/login/")
    assert status == 301
    assert headers["Location"].startswith("https://localhost:")
    # The access log goes to stdout, gunicorn's own messages to stderr.
    assert log_holds(deployed.log, r'"GET /readyz HTTP/1.1" 200 ')
    assert "Starting gunicorn" not in deployed.log.read_text()


def test_static_files_have_hashed_names_and_far_future_cache(deployed: Server):
    manifest = json.loads((deployed.static_root / "staticfiles.json").read_text())["paths"]
    for name in (
        "vendor/htmx.min.js",
        "review/review.css",
        "admin/css/base.css",
        "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js",
    ):
        hashed = manifest[name]
        assert hashed != name
        status, headers, body = get(
            f"{deployed.url}/static/{hashed}", {**PROXIED, "Accept-Encoding": "gzip"}
        )
        assert status == 200, name
        assert body, name
        assert "immutable" in headers["Cache-Control"], name
        max_age = int(re.search(r"max-age=(\d+)", headers["Cache-Control"])[1])
        assert max_age >= 365 * 24 * 3600, name
        assert headers.get("Content-Encoding") == "gzip", name
    # The unhashed name is served too, but briefly cached: it changes with the next release.
    status, headers, _ = get(f"{deployed.url}/static/vendor/htmx.min.js", PROXIED)
    assert status == 200
    assert "immutable" not in headers["Cache-Control"]


def static_failures(page) -> list[str]:
    failures: list[str] = []
    page.on(
        "response",
        lambda response: (
            failures.append(f"{response.status} {response.url}")
            if "/static/" in response.url and response.status >= 400
            else None
        ),
    )
    page.on("requestfailed", lambda request: failures.append(f"failed {request.url}"))
    return failures


def test_console_loads_styled_with_htmx_working(deployed: Server, page):
    from playwright.sync_api import expect

    failures = static_failures(page)
    page.goto(f"{deployed.url}/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    page.get_by_label("Username").fill("curator")
    page.get_by_label("Password").fill("castellan-demo")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Review queue")).to_be_visible()

    # review.css applied: the top bar has its dark background, not the browser's default.
    background = page.locator(".top").evaluate("e => getComputedStyle(e).backgroundColor")
    assert background == "rgb(19, 40, 63)"
    assert page.evaluate("typeof window.htmx") == "object"
    # An htmx interaction: the filter swaps the results in place through an htmx request.
    with page.expect_request(
        lambda request: "type=entity" in request.url and request.headers.get("hx-request")
    ) as swapped:
        page.get_by_label("Type").select_option("entity")
    assert swapped.value.response().status == 200
    expect(page).to_have_url(re.compile(r"type=entity"))
    expect(page.get_by_role("heading", name="Review queue")).to_be_visible()

    page.goto(f"{deployed.url}/admin/login/")
    assert page.locator("#header").evaluate("e => getComputedStyle(e).display") == "flex"
    assert failures == []


def test_swagger_ui_renders_the_schema(deployed: Server, page):
    from playwright.sync_api import expect

    failures = static_failures(page)
    page.goto(f"{deployed.url}/accounts/login/")
    page.get_by_label("Username").fill("curator")
    page.get_by_label("Password").fill("castellan-demo")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Review queue")).to_be_visible()

    page.goto(f"{deployed.url}/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Castellan API")
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible()
    assert page.locator(".swagger-ui .opblock").count() > 10
    assert failures == []


def written(deployed: Server, verdict: str) -> float:
    """The writes of one verdict as a scrape reports them (summed over gunicorn's workers),
    scraped as Prometheus does: straight to gunicorn, plain HTTP, with the bearer token."""
    status, _, body = get(f"{deployed.url}/metrics", {"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert status == 200
    found = re.search(
        rf'^castellan_drawer_writes_total{{verdict="{verdict}"}} (\S+)$', body.decode(), re.M
    )
    return float(found[1]) if found else 0.0


def test_metrics_count_a_write_and_the_log_says_who_wrote_it(deployed: Server):
    assert get(f"{deployed.url}/metrics")[0] == 404  # no token, no metrics
    token = manage(deployed.env, "drf_create_token", "curator").split()[2]
    before = written(deployed, "new")
    headers = {
        **PROXIED,
        "Authorization": f"Token {token}",
        "Content-Type": "application/json",
        "X-Request-ID": "deploy-test-write",
    }
    content = {"content": f"Gunicorn counted this write, {secrets.token_hex(4)}."}
    status, answer, _ = get(
        f"{deployed.url}/api/wings/ops/rooms/deploys/drawers", headers, json.dumps(content).encode()
    )
    assert status == 201
    assert answer["X-Request-ID"] == "deploy-test-write"
    # Two workers: every scrape, whichever worker answers it, adds up both.
    assert [written(deployed, "new") for _ in range(4)] == [before + 1] * 4

    lines = [
        json.loads(line) for line in deployed.errors.read_text().splitlines() if line[:1] == "{"
    ]
    (logged,) = [line for line in lines if line.get("request_id") == "deploy-test-write"]
    assert logged["user"] == "curator"
    assert (logged["method"], logged["status"]) == ("POST", 201)
    assert logged["verdicts"] == {"new": 1}


def logged_line(deployed: Server, request_id: str, wait: float = 10) -> dict:
    """The app's JSON log line of a request, read until `wait` seconds have passed."""
    deadline = time.monotonic() + wait
    while True:
        for line in deployed.errors.read_text().splitlines():
            if line[:1] == "{" and json.loads(line).get("request_id") == request_id:
                return json.loads(line)
        assert time.monotonic() < deadline, f"no log line of {request_id}"
        time.sleep(0.05)


def test_a_body_cut_short_by_a_client_that_left_is_a_400_not_a_500(deployed: Server):
    """Headers and part of the body, then the connection reset: gunicorn's read of the rest
    fails, which answered 500 with a traceback (the concurrency trial)."""
    token = manage(deployed.env, "drf_create_token", "curator").split()[2]
    host, port = deployed.url.removeprefix("http://").split(":")
    head = (
        "POST /api/wings/ops/rooms/cut/drawers HTTP/1.1\r\nHost: localhost\r\n"
        "X-Forwarded-Proto: https\r\nX-Request-ID: deploy-test-cut\r\n"
        f"Authorization: Token {token}\r\nContent-Type: application/json\r\n"
        'Content-Length: 1000\r\n\r\n{"content": "half of it'
    )
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.encode())
        time.sleep(0.5)  # the worker has begun reading the body
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST
    logged = logged_line(deployed, "deploy-test-cut")
    assert logged["status"] == 400
    assert "Internal Server Error" not in deployed.errors.read_text()


def test_a_body_cut_short_by_a_half_closed_connection_is_a_400_and_stores_nothing(
    deployed: Server,
):
    """A valid JSON body under a Content-Length 20 bytes longer, then `shutdown(SHUT_WR)`:
    gunicorn's read ended at the connection's end without an error, and the part was stored
    (201). The connection is still open for the answer."""
    token = manage(deployed.env, "drf_create_token", "curator").split()[2]
    content = f"Half a body, {secrets.token_hex(4)}."
    sent = json.dumps({"content": content}).encode()
    head = (
        "POST /api/wings/ops/rooms/cut/drawers HTTP/1.1\r\nHost: localhost\r\n"
        f"X-Forwarded-Proto: https\r\nAuthorization: Token {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(sent) + 20}\r\n\r\n"
    )
    host, port = deployed.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head.encode() + sent)
        sock.shutdown(socket.SHUT_WR)
        status, _, answer = read_answer(sock)
    assert status.split()[1] == "400"
    assert json.loads(answer)["code"] == "invalid"
    headers = {**PROXIED, "Authorization": f"Token {token}"}
    _, _, listed = get(f"{deployed.url}/api/wings/ops/rooms/cut/drawers", headers)
    assert content.encode() not in listed


def test_bodies_that_stop_coming_are_refused_at_the_deadline_and_free_their_threads(
    deployed: Server,
):
    """Twelve connections each send a head with Content-Length: 100 and part of the body, then
    nothing: each held a thread for good (here 2 workers x 2 threads), and /healthz was never
    answered. Past GUNICORN_BODY_TIMEOUT each is answered 400 `invalid`, saying why, and
    closed; /healthz is answered meanwhile."""
    token = manage(deployed.env, "drf_create_token", "curator").split()[2]
    head = (
        "POST /api/wings/ops/rooms/slow/drawers HTTP/1.1\r\nHost: localhost\r\n"
        f"X-Forwarded-Proto: https\r\nAuthorization: Token {token}\r\n"
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"content": "slo'
    )
    host, port = deployed.url.removeprefix("http://").split(":")
    started = time.monotonic()
    slow = [socket.create_connection((host, int(port)), timeout=60) for _ in range(12)]
    try:
        for sock in slow:
            sock.sendall(head.encode())
        assert get(f"{deployed.url}/healthz")[0] == 200
        answers = [read_answer(sock) for sock in slow]
    finally:
        for sock in slow:
            sock.close()
    # Rounds of the threads, each BODY_TIMEOUT long: six at most (all twelve on one worker's
    # two threads). 21 to 23 s when each connection's close waited 2 s for the client on the
    # worker's main thread.
    assert time.monotonic() - started < 6 * BODY_TIMEOUT + 6
    assert {status.split()[1] for status, _, _ in answers} == {"400"}
    refusal = json.loads(answers[0][2])
    assert refusal["code"] == "invalid"
    assert f"did not arrive within {BODY_TIMEOUT} seconds" in refusal["error"]
    assert "Internal Server Error" not in deployed.errors.read_text()


def test_heads_that_stop_coming_are_answered_408_at_the_deadline_and_free_their_threads(
    deployed: Server,
):
    """Twenty-four connections each send part of a request's head, then nothing: each held a
    thread for good (here 2 workers x 2 threads), and /healthz was never answered; with a
    deadline counted from each thread taking one up, they held them for six rounds of it.
    Counted from when each was queued for a thread, all are answered 408 `request_timeout`
    and closed within about one, /healthz meanwhile, and the next request is served."""
    partial = "GET /api/wings HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-Pro"
    host, port = deployed.url.removeprefix("http://").split(":")
    started = time.monotonic()
    slow = [socket.create_connection((host, int(port)), timeout=60) for _ in range(24)]
    try:
        for sock in slow:
            sock.sendall(partial.encode())
        assert get(f"{deployed.url}/healthz")[0] == 200
        answered_healthz = time.monotonic() - started
        answers = [read_answer(sock) for sock in slow]
    finally:
        for sock in slow:
            sock.close()
    assert answered_healthz < HEAD_TIMEOUT + 4  # six rounds of HEAD_TIMEOUT before
    # Answered and closed (`read_answer` reads to the close) within about one: 24 to 46 s when
    # each close waited 2 s for the client on the worker's main thread.
    assert time.monotonic() - started < HEAD_TIMEOUT + 4
    assert {status for status, _, _ in answers} == {"HTTP/1.1 408 Request Timeout"}
    refusal = json.loads(answers[0][2])
    assert refusal["code"] == "request_timeout"
    assert f"did not arrive within {HEAD_TIMEOUT} seconds" in refusal["error"]
    assert get(f"{deployed.url}/healthz")[0] == 200
    assert log_holds(deployed.errors, "Closed a connection: the request's head did not arrive")
    assert "Traceback" not in deployed.errors.read_text()


def test_connections_that_send_nothing_hold_no_thread(deployed: Server):
    """Forty connections opened and left silent: gunicorn's worker waited up to 5 s for each
    one's first bytes in a thread, so /healthz went unanswered for rounds of that; now each
    goes back to the poller at once, and /healthz is answered straight away."""
    host, port = deployed.url.removeprefix("http://").split(":")
    idle = [socket.create_connection((host, int(port)), timeout=60) for _ in range(40)]
    try:
        time.sleep(0.5)  # every one accepted and handed to a thread
        # A silent one that speaks at last, within gunicorn's `keepalive`, is served.
        whole = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        idle[-1].sendall(whole)
        assert read_answer(idle[-1])[0] == "HTTP/1.1 200 OK"
        started = time.monotonic()
        assert get(f"{deployed.url}/healthz")[0] == 200
        assert time.monotonic() - started < 3  # rounds of 5 s before
    finally:
        for sock in idle:
            sock.close()


def test_clients_that_keep_their_side_open_after_the_answer_hold_no_worker(deployed: Server):
    """Twelve clients each ask with `Connection: close`, read the answer and keep their side of
    the connection open. gunicorn waited up to 2 s for each to close its side, one after the
    other on the worker's main thread: the answers' ends came 2 s apart, and a request
    meanwhile waited for them all (some 12 s). Now the worker's poller waits for them."""
    request = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    host, port = deployed.url.removeprefix("http://").split(":")
    started = time.monotonic()
    held = [socket.create_connection((host, int(port)), timeout=60) for _ in range(12)]
    try:
        for sock in held:
            sock.sendall(request)
        answers = [read_answer(sock)[0] for sock in held]  # each read to the server's close
        assert get(f"{deployed.url}/healthz")[0] == 200
        assert time.monotonic() - started < 2
    finally:
        for sock in held:
            sock.close()
    assert set(answers) == {"HTTP/1.1 200 OK"}


def raw_request(server: Server, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Bytes no HTTP client library would send, over a socket: (status, headers, body)."""
    host, port = server.url.removeprefix("http://").split(":")
    status, headers, body = exchange(host, int(port), request)
    return int(status.split()[1]), {"X-Status-Line": status, **headers}, body


@pytest.mark.parametrize(
    ("request_bytes", "status", "code"),
    [
        (
            b"GET /api/search?q=" + b"a" * 5000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n",
            414,
            "request_too_large",
        ),
        (
            b"GET /api/ HTTP/1.1\r\nHost: localhost\r\n"
            + b"".join(b"X-Pad-%d: 1\r\n" % n for n in range(120))
            + b"\r\n",
            431,
            "request_too_large",
        ),
        (b"GET /api/ HTTP/1.1\r\nHost: localhost\r\nX-Evil: a\x00b\r\n\r\n", 400, "invalid"),
        (b"NOT A REQUEST LINE\r\n\r\n", 400, "invalid"),
        (
            b"GET /api/ HTTP/1.1\r\nHost: localhost\r\nExpect: nonsense\r\n\r\n",
            417,
            "unsupported_request",
        ),
        (
            b"POST /api/ HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: br\r\n\r\n",
            501,
            "unsupported_request",
        ),
        # The MCP process refuses the same (tests/api/test_mcp_refusals.py).
        (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, "invalid"),
        (b"GET /healthz HTTP/9.9\r\nHost: localhost\r\n\r\n", 400, "invalid"),
        (b"GET * HTTP/1.1\r\nHost: localhost\r\n\r\n", 400, "invalid"),
        (
            b"POST /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            400,
            "invalid",
        ),
        (b"GET localhost:80 HTTP/1.1\r\nHost: localhost\r\n\r\n", 400, "invalid"),
    ],
    ids=[
        *("long request line", "too many headers", "NUL in a header", "garbage", "expect"),
        *("coding", "http2-preface", "9.9", "asterisk", "length-and-coding", "authority"),
    ],
)
def test_requests_gunicorn_cannot_parse_are_refused_in_json(
    deployed: Server, request_bytes: bytes, status: int, code: str
):
    """gunicorn refuses these before Django sees them; its answer is the API's error shape."""
    answered, headers, body = raw_request(deployed, request_bytes)
    assert answered == status
    assert headers["X-Status-Line"] == f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body)["code"] == code


@pytest.mark.parametrize(
    ("request_bytes", "status", "said"),
    [
        (b"GET /healthz HTTP/1.1\r\n\r\n", 400, "Missing Host header"),
        (b"GET http://localhost/healthz HTTP/1.1\r\n\r\n", 400, "Missing Host header"),
        (
            b"GET http://evil.example/healthz HTTP/1.1\r\nHost: localhost\r\n\r\n",
            400,
            "'evil.example'",
        ),
        (b"GET http://localhost/healthz HTTP/1.1\r\nHost: evil.example\r\n\r\n", 200, ""),
    ],
    ids=[
        *("no-host", "absolute-form-no-host"),
        *("absolute-form-another-host", "absolute-form-an-allowed-host"),
    ],
)
def test_the_host_is_read_as_http_1_1_has_it(
    deployed: Server, request_bytes: bytes, status: int, said: str
):
    """gunicorn served an HTTP/1.1 request without Host (Django took the server's own name),
    and one whose target named another host than its header (RFC 9112: the target's wins);
    the MCP process (h11) refused the first and served the second (config/wsgi.py)."""
    answered, headers, body = raw_request(deployed, request_bytes)
    assert answered == status
    assert headers["Content-Type"] == "application/json"
    assert said in json.loads(body).get("error", "")


def test_a_raw_utf_8_url_is_refused_quoting_it_as_written(deployed: Server):
    """Not percent-encoded (README: let curl encode the query); the message quotes the URL as
    its bytes read in UTF-8, not one character a byte."""
    request = "GET /api/search?q=数据库 HTTP/1.1\r\nHost: localhost\r\n\r\n".encode()
    status, _, body = raw_request(deployed, request)
    assert status == 400
    assert "q=数据库" in json.loads(body)["error"]


@pytest.mark.parametrize(
    ("request_bytes", "status", "code"),
    [
        (
            b"POST /api/sweeps HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
            b"X-Forwarded-Proto: https\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            b'12\r\n{"wing": "notes"}\r\n0\r\n\r\n',
            411,
            "unsupported_request",
        ),
        (
            b"POST /api/wings/%ff/rooms/r/drawers HTTP/1.1\r\nHost: localhost\r\n"
            b"Connection: close\r\nX-Forwarded-Proto: https\r\n"
            b"Content-Type: application/json\r\nContent-Length: 2\r\n"
            b"\r\n{}",
            400,
            "invalid",
        ),
    ],
    ids=["chunked body", "path not UTF-8"],
)
def test_what_gunicorn_hands_on_that_django_would_misread_is_refused(
    deployed: Server, request_bytes: bytes, status: int, code: str
):
    """A chunked body (Django reads a body by its Content-Length: it read none) and a path
    whose escapes are not UTF-8 (Django kept `%FF` as text), checked by the app's edge on what
    gunicorn hands on (`RAW_URI`), before authentication."""
    answered, _, body = raw_request(deployed, request_bytes)
    assert answered == status
    assert json.loads(body)["code"] == code


@pytest.mark.parametrize(
    ("size", "connection"),
    # 65,521 makes a body of 64 KiB exactly: gunicorn gives up at 64 KiB drained.
    [(200_000, "close"), (65_521, "close"), (1_000, "keep-alive")],
)
def test_an_answer_given_before_a_large_body_is_read_says_the_connection_closes(
    deployed: Server, size: int, connection: str
):
    """A refusal before the body (401 here) leaves it unread; gunicorn drains 64 KiB of it at
    most, and past that closes the connection, where its answer had said `keep-alive`: a client
    reusing it met a reset connection on its next request (a helper's trial). A small body is
    drained, and the connection kept."""
    body = b'{"content": "' + b"x" * size + b'"}'
    head = (
        b"POST /api/wings/w/rooms/r/drawers HTTP/1.1\r\nHost: localhost\r\n"
        b"X-Forwarded-Proto: https\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body)
    )
    host, port = deployed.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head + body)
        sock.settimeout(3)  # a kept connection is not closed by the server: read what came
        raw = b""
        with contextlib.suppress(TimeoutError):
            while chunk := sock.recv(65536):
                raw += chunk
    status, *lines = raw.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    assert status.split()[1] == "401"
    assert headers["Connection"] == connection


def test_an_answer_to_a_chunked_body_says_the_connection_closes(deployed: Server):
    """A chunked body is refused (411) unread: gunicorn closes the connection, so it says so."""
    chunk = b"x" * 100_000
    request = (
        b"POST /api/wings/w/rooms/r/drawers HTTP/1.1\r\nHost: localhost\r\n"
        b"X-Forwarded-Proto: https\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(chunk) + chunk + b"\r\n0\r\n\r\n"
    )
    status, headers, _ = raw_request(deployed, request)
    assert status == 411
    assert headers["Connection"] == "close"
