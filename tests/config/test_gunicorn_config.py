"""config/gunicorn.py reads its size and address from the environment."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from tests.raw_http import read_answer

CONFIG = Path(__file__).resolve().parents[2] / "config" / "gunicorn.py"


def load(monkeypatch, **env: str) -> dict:
    for name in (
        *("BIND", "PORT", "WEB_CONCURRENCY", "GUNICORN_THREADS"),
        *("GUNICORN_HEAD_TIMEOUT", "GUNICORN_BODY_TIMEOUT"),
    ):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(CONFIG))


def test_the_mcp_process_holds_a_request_to_gunicorn_s_own_limits(monkeypatch):
    """config.asgi refuses past `api.refusals`' limits: gunicorn's, as this configuration
    leaves them."""
    from gunicorn.config import Config

    from api import refusals

    config, settings = load(monkeypatch), Config()
    for name, value in config.items():
        if name in settings.settings:
            settings.set(name, value)
    assert settings.limit_request_line == refusals.REQUEST_LINE_MAX
    assert settings.limit_request_fields == refusals.HEADER_FIELDS_MAX
    assert settings.limit_request_field_size == refusals.HEADER_FIELD_MAX


def test_defaults(monkeypatch):
    config = load(monkeypatch)
    assert config["bind"] == ["127.0.0.1:8000"]
    assert (config["workers"], config["threads"]) == (2, 4)
    assert config["worker_class"] == "config.http_deadlines.DeadlineThreadWorker"
    assert (config["accesslog"], config["wsgi_app"]) == ("-", "config.wsgi:application")
    assert config["control_socket_disable"] is True
    assert config["body_timeout"] == 30
    assert config["head_timeout"] == 10


def test_the_worker_class_is_gunicorn_s_threaded_worker(monkeypatch):
    from gunicorn.config import Config
    from gunicorn.workers.gthread import ThreadWorker

    settings = Config()
    settings.set("worker_class", load(monkeypatch)["worker_class"])
    assert issubclass(settings.worker_class, ThreadWorker)


@pytest.mark.parametrize(
    ("env", "bind"),
    [
        ({"PORT": "5000"}, ["0.0.0.0:5000"]),
        ({"BIND": "unix:/run/castellan.sock", "PORT": "5000"}, ["unix:/run/castellan.sock"]),
    ],
    ids=["port", "bind wins"],
)
def test_bind_from_the_environment(monkeypatch, env, bind):
    assert load(monkeypatch, **env)["bind"] == bind


def test_workers_and_threads_from_the_environment(monkeypatch):
    config = load(monkeypatch, WEB_CONCURRENCY="5", GUNICORN_THREADS="1")
    assert (config["workers"], config["threads"], config["worker_class"]) == (5, 1, "sync")


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5"])
def test_nonsense_sizes_refuse_to_start(monkeypatch, value):
    with pytest.raises(SystemExit, match="WEB_CONCURRENCY must be a positive whole number"):
        load(monkeypatch, WEB_CONCURRENCY=value)


def test_gunicorn_refusals_answer_json_with_a_stable_code(monkeypatch):
    import json
    import socket

    from gunicorn import util

    from api.error_codes import ERROR_CODES
    from api.refusals import REFUSAL_CODES

    config = load(monkeypatch)
    monkeypatch.setattr(util, "write_error", util.write_error)  # restored after the test
    config["post_worker_init"](worker=None)
    assert util.write_error is config["write_json_error"]

    ours, theirs = socket.socketpair()
    with ours, theirs:
        message = "Request Line is too large (5000 > 4094) \u00e9" + "x" * 1000
        util.write_error(ours, 414, "URI Too Long", message)
        ours.close()
        status, headers, body = read_answer(theirs)
    # The status's own phrase (http.HTTPStatus), whatever gunicorn gave.
    assert status == "HTTP/1.1 414 Request-URI Too Long"
    assert headers["Content-Type"] == "application/json"
    assert int(headers["Content-Length"]) == len(body)
    answer = json.loads(body)
    assert answer["code"] == "request_too_large"
    assert answer["error"].startswith(
        "Request-URI Too Long: Request Line is too large (5000 > 4094) \u00e9"
    )
    assert len(answer["error"]) < 250  # the quoted request is cut short
    assert set(REFUSAL_CODES.values()) <= set(ERROR_CODES)
    for status_int, code in REFUSAL_CODES.items():
        assert status_int in ERROR_CODES[code].statuses, code


@pytest.mark.parametrize(
    ("message", "quoted"),
    [
        pytest.param(
            "Invalid request line: 'GET /?q=\u6570\u636e'".encode().decode("latin-1"),
            "Invalid request line: 'GET /?q=\u6570\u636e'",
            id="utf-8-bytes",
        ),
        pytest.param(  # gunicorn's: the str's repr, its unprintable characters escaped
            repr("GET /?q=\u6570".encode().decode("latin-1")),
            "'GET /?q=\u6570'",
            id="gunicorn-s-repr",
        ),
        pytest.param(  # h11's: the bytes' repr
            repr(bytearray("GET /?q=\u6570".encode())),
            "bytearray(b'GET /?q=\u6570')",
            id="h11-s-repr",
        ),
        pytest.param(
            "Invalid request line: 'GET /?q=\\xff'",
            "Invalid request line: 'GET /?q=\\xff'",
            id="not-utf-8",
        ),
        pytest.param("Bad header \u00e9", "Bad header \u00e9", id="latin-1-alone"),
        pytest.param("Bad \u4e00 \\xe6", "Bad \u4e00 \\xe6", id="already-text"),
    ],
)
def test_a_quoted_request_reads_as_utf_8_where_it_is(message, quoted):
    """The servers read a request's bytes one character each (latin-1)."""
    from api.refusals import as_sent

    assert as_sent(message) == quoted


@pytest.mark.parametrize("name", ["GUNICORN_HEAD_TIMEOUT", "GUNICORN_BODY_TIMEOUT"])
def test_the_timeouts_from_the_environment(monkeypatch, name):
    setting = name.removeprefix("GUNICORN_").lower()
    assert load(monkeypatch, **{name: "5"})[setting] == 5
    with pytest.raises(SystemExit, match=f"{name} must be a positive whole number"):
        load(monkeypatch, **{name: "0"})


class Request:
    """What the hooks read of gunicorn's request: its method, path and the body's reader."""

    method, path = "POST", "/api/diary"

    def __init__(self, sock):
        self.unreader = type("Unreader", (), {"sock": sock})()


def test_a_body_that_stops_coming_fails_at_the_deadline(monkeypatch):
    """A real gunicorn's answer is in tests/deploy/test_gunicorn.py."""
    import logging
    import socket
    import time

    config = load(monkeypatch, GUNICORN_BODY_TIMEOUT="1")
    worker = type("Worker", (), {"log": logging.getLogger("test")})()
    ours, theirs = socket.socketpair()
    with ours, theirs:
        request = Request(ours)
        config["pre_request"](worker, request)
        theirs.sendall(b'{"content": "slo')
        assert request.unreader.sock.recv(100) == b'{"content": "slo'
        started = time.monotonic()
        with pytest.raises(TimeoutError, match="did not arrive within 1 seconds"):
            request.unreader.sock.recv(100)
        assert 0.5 < time.monotonic() - started < 5
        assert ours.gettimeout() is None  # the answer is written as gunicorn has it
        config["post_request"](worker, request, {}, None)
        assert request.unreader.sock is ours  # the next request on the connection: no deadline


def test_a_head_that_stops_coming_is_answered_408_at_the_deadline(monkeypatch):
    """A real gunicorn's answer is in tests/deploy/test_gunicorn.py."""
    import json
    import socket
    import time

    from config.http_deadlines import HeadDeadline

    ours, theirs = socket.socketpair()
    with ours, theirs:
        head = HeadDeadline(ours)
        head.arm(1)
        theirs.sendall(b"GET /api/wings HTTP/1.1\r\nHost: lo")
        assert head.recv(100) == b"GET /api/wings HTTP/1.1\r\nHost: lo"
        started = time.monotonic()
        assert head.recv(100) == b""  # read as a client that closed: gunicorn closes quietly
        assert 0.5 < time.monotonic() - started < 5
        assert ours.gettimeout() is None  # the socket as gunicorn had it
        ours.shutdown(socket.SHUT_WR)
        status, headers, body = read_answer(theirs)
    assert status == "HTTP/1.1 408 Request Timeout"
    assert headers["Connection"] == "close"
    answer = json.loads(body)
    assert answer["code"] == "request_timeout"
    assert answer["error"] == (
        "Request Timeout: the request's head did not arrive within 1 seconds"
    )


def test_past_the_head_s_deadline_what_has_arrived_is_still_read():
    """The deadline is armed as the connection is queued for a thread (`enqueue_req`), so the
    time it waits for one counts; a head that arrived whole meanwhile is read, not refused,
    and one that has not is answered 408 at once, without waiting again."""
    import socket
    import time

    from config.http_deadlines import HeadDeadline

    ours, theirs = socket.socketpair()
    with ours, theirs:
        head = HeadDeadline(ours)
        head.arm(1)
        request = b"GET /healthz HTTP/1.1\r\nHost: lo\r\n\r\n"
        theirs.sendall(request)
        time.sleep(1.2)  # waiting for a free thread
        assert head.recv(100) == request
        theirs.setblocking(False)
        with pytest.raises(BlockingIOError):  # no 408 written
            theirs.recv(100)
        head.arm(1)
        theirs.sendall(b"GET /healthz HTTP/1.1\r\nHo")  # the next head, part of it
        time.sleep(1.2)
        assert head.recv(100) == b"GET /healthz HTTP/1.1\r\nHo"
        started = time.monotonic()
        assert head.recv(100) == b""  # then nothing: 408 at once
        assert time.monotonic() - started < 0.5


def test_a_thread_does_not_wait_for_a_new_connection_s_first_bytes():
    """gunicorn's own worker waits up to 5 s in the thread; here it is given back to the
    poller at once (gunicorn's deferral), and taken up when its bytes arrive."""
    import socket
    import time
    from types import SimpleNamespace

    from gunicorn.workers import gthread

    from config.http_deadlines import DeadlineThreadWorker

    ours, theirs = socket.socketpair()
    with ours, theirs:
        conn = gthread.TConn(SimpleNamespace(), ours, ("127.0.0.1", 1), ("127.0.0.1", 2))
        worker = DeadlineThreadWorker.__new__(DeadlineThreadWorker)
        started = time.monotonic()
        assert worker.handle(conn) is gthread._DEFER
        assert time.monotonic() - started < 1
        assert not conn.initialized


def test_the_head_s_deadline_ends_with_the_head_and_the_body_s_with_the_body(monkeypatch):
    """Once the head is read its deadline is off; the body has its own; the next request on a
    kept-alive connection is read through the same (disarmed) head deadline, armed again by
    the worker when it queues the connection for a thread."""
    import logging
    import socket
    import time

    from config.http_deadlines import DeadlineThreadWorker, HeadDeadline

    config = load(monkeypatch, GUNICORN_BODY_TIMEOUT="1")
    worker = type("Worker", (), {"log": logging.getLogger("test")})()
    ours, theirs = socket.socketpair()
    with ours, theirs:
        head = HeadDeadline(ours)
        head.arm(1)
        request = Request(head)
        time.sleep(0.6)
        config["pre_request"](worker, request)
        assert head.deadline is None
        time.sleep(0.6)  # past the head's deadline, within the body's (from the head)
        theirs.sendall(b'{"content"')
        assert request.unreader.sock.recv(100) == b'{"content"'
        with pytest.raises(TimeoutError, match="did not arrive within 1 seconds"):
            request.unreader.sock.recv(100)
        config["post_request"](worker, request, {}, None)
        assert request.unreader.sock is head
        connection = type(
            "Conn", (), {"parser": type("Parser", (), {"unreader": request.unreader})}
        )()
        assert DeadlineThreadWorker._head_deadline(connection) is head
        fresh = type("Conn", (), {"parser": None, "sock": ours})()
        wrapped = DeadlineThreadWorker._head_deadline(fresh)
        assert fresh.sock is wrapped
        assert wrapped.sock is ours
        assert DeadlineThreadWorker._head_deadline(fresh) is wrapped  # one for the connection


@pytest.mark.parametrize(
    ("holder", "name"),
    [("module", "_DEFER"), ("TConn", "wait_for_data"), ("worker", "on_pending_socket_readable")],
)
def test_the_worker_refuses_to_start_on_a_gunicorn_that_cannot_defer(monkeypatch, holder, name):
    """`DeadlineThreadWorker.handle` gives a silent connection back to the poller with
    gunicorn's private `_DEFER`, reading `TConn.data_ready`: pyproject.toml allowed a gunicorn
    (23) without them, whose worker then failed every new connection without a word (an
    AttributeError in the thread, the connection closed unanswered). It refuses to start."""
    import logging

    from gunicorn.config import Config
    from gunicorn.workers import gthread

    from config.http_deadlines import DeadlineThreadWorker

    target = {"module": gthread, "TConn": gthread.TConn, "worker": gthread.ThreadWorker}[holder]
    DeadlineThreadWorker.check_config(Config(), logging.getLogger("test"))  # as pinned: starts
    monkeypatch.delattr(target, name)
    with pytest.raises(SystemExit, match="defers a connection"):
        DeadlineThreadWorker.check_config(Config(), logging.getLogger("test"))
