"""How long gunicorn's threads wait for a client: a request's head (`HeadDeadline`, armed by
`DeadlineThreadWorker`) and its body (`BodyDeadline`, config/gunicorn.py's `pre_request`).

Once a connection's first bytes come, a gthread worker's thread reads the rest of the head,
then the body, as they come, with no limit of gunicorn's on how long: a client that sent part
of either, then nothing, held the thread for good, and a dozen such held every thread
(/healthz unanswered).
Past a deadline the read stops: a head is answered 408 `request_timeout` and its connection
closed; a body's read fails as a broken connection's does (the app answers 400 `invalid`).
A connection closed waits for its client to close its side on the worker's poller
(`Lingering`), not on the one thread that accepts and hands on every connection. The
TLS proxy buffering each request (README, "Deploy") keeps slow clients off gunicorn; these
bound what reaches it anyway.

No Django here: gunicorn's configuration imports it before Django is set up.
"""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import socket
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import gunicorn
from gunicorn import util
from gunicorn.http import parser as gunicorn_parser
from gunicorn.workers import gthread
from gunicorn.workers.gthread import ThreadWorker

from api.refusals import refusal

log = logging.getLogger("castellan.gunicorn")


def positive_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise SystemExit(f"{name} must be a positive whole number, not {raw!r}.")
    return int(raw)


def write_json_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's `util.write_error`, answering JSON: `{"error", "code"}` and the status, with
    the status's own reason (`api.refusals`); config/gunicorn.py puts it in gunicorn's place,
    and a head past its deadline is answered by it too."""
    reason, body = refusal(status_int, reason, mesg)
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
        "Content-Type: application/json\r\nX-Content-Type-Options: nosniff\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


def head_seconds() -> int:
    """`GUNICORN_HEAD_TIMEOUT` (default 10): seconds a request's head has to arrive whole,
    counted from its first bytes. A client sends its head in one packet or a few."""
    return positive_int("GUNICORN_HEAD_TIMEOUT", 10)


def body_seconds() -> int:
    """`GUNICORN_BODY_TIMEOUT` (default 30): seconds a request's body has to arrive whole,
    counted from its head."""
    return positive_int("GUNICORN_BODY_TIMEOUT", 30)


class _Deadline:
    """A socket as a request's reader sees it: every `recv` waits at most until the deadline.
    The socket's own timeout is put back after each read, so writing the answer is left as
    gunicorn has it; everything but `recv` is the socket's."""

    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.seconds = 0
        self.deadline: float | None = None

    def recv(self, size: int) -> bytes:
        """What has arrived, waiting for more until the deadline; past it, only what has
        arrived already (a request that waited for a thread is not refused for that)."""
        if self.deadline is None:
            return self.sock.recv(size)
        before = self.sock.gettimeout()
        self.sock.settimeout(max(self.deadline - time.monotonic(), 0))  # 0: do not wait
        try:
            return self.sock.recv(size)
        except (TimeoutError, BlockingIOError):
            return self.too_late()
        finally:
            self.sock.settimeout(before)

    def too_late(self) -> bytes:
        raise NotImplementedError

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


class BodyDeadline(_Deadline):
    """Past the deadline a read fails with TimeoutError (an OSError, which Django makes
    `UnreadablePostError`: the API answers 400 `invalid`, saying why)."""

    def __init__(self, sock: Any, seconds: int) -> None:
        super().__init__(sock)
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds

    def too_late(self) -> bytes:
        raise TimeoutError(
            f"the whole body did not arrive within {self.seconds} seconds of the request's head"
        )


class HeadDeadline(_Deadline):
    """The connection's socket as gunicorn's parser reads it, one for the connection's life:
    armed when the worker hands the connection to its threads with bytes to read (accepted, or
    kept alive and readable again), disarmed once the head is read (`pre_request`). The time a
    connection waits for a free thread counts: a client that trickles its head cannot make the
    deadline start over each time a thread takes it up. Past the deadline the client is
    answered 408 and the read ends as if the client had closed, which gunicorn takes quietly
    and closes the connection."""

    def arm(self, seconds: int) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds

    def disarm(self) -> None:
        self.deadline = None

    def too_late(self) -> bytes:
        message = f"the request's head did not arrive within {self.seconds} seconds"
        log.warning("Closed a connection: %s.", message)
        self.disarm()
        with contextlib.suppress(OSError):  # the client is gone: nothing to tell it
            write_json_error(self.sock, 408, "Request Timeout", message)
        return b""


class DeadlineThreadWorker(ThreadWorker):
    """gunicorn's threaded worker, reading each request's head through the connection's
    `HeadDeadline`, armed as the connection is queued for a thread. The parser reads the
    socket it is given when the connection is first taken up, so a new connection's socket is
    wrapped before that, and a kept-alive one's reader holds the wrapper already. Only `recv`
    is wrapped: gunicorn's own TLS (not used here: the proxy ends TLS) would need the socket
    itself, so it is left alone.

    A thread does not wait for a new connection's first bytes: gunicorn's worker waits up to
    5 s in the thread before giving the connection back to its poller, so forty connections
    that sent nothing held every thread (/healthz unanswered) for as long. Here a connection
    with nothing to read yet goes back to the poller at once (gunicorn's own deferral, which
    closes it after `keepalive` seconds), and comes back armed when its bytes arrive."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.head_seconds = head_seconds()
        self.lingering: Lingering | None = None

    def init_process(self) -> None:
        self.lingering = Lingering(closed=self.one_closed)
        super().init_process()  # it makes the poller, then runs the worker: it does not return

    def finish_request(self, conn: Any, fs: Any) -> None:
        """gunicorn closes a connection it is done with by waiting up to 2 s for the client to
        close its side first (`util.close_graceful`, RFC 9112 9.6), on the worker's one main
        thread, which meanwhile accepts nothing and hands nothing on: a dozen clients that kept
        their side open after `Connection: close` held every request of the worker for seconds
        each. Here the poller waits for them (`Lingering`); the rest is gunicorn's."""
        if fs.cancelled() or fs.exception() is not None or fs.result() or not self.lingering:
            super().finish_request(conn, fs)
            return
        self.lingering.close(conn.sock, self.poller)  # counted in `nr_conns` until closed

    def one_closed(self) -> None:
        self.nr_conns -= 1

    def murder_pending(self) -> None:
        super().murder_pending()
        if self.lingering:
            self.lingering.expire(self.poller)

    @classmethod
    def check_config(cls, cfg: Any, log: Any) -> None:
        """Refuse to start on a gunicorn whose threaded worker cannot defer a connection to
        its poller (`_DEFER`, `TConn.wait_for_data`, the pending connections' readiness: the
        version constraints.txt pins has them, 23 had none): `handle` would fail every new
        connection, closing it unanswered, where the arbiter can say why before any worker."""
        super().check_config(cfg, log)
        if not can_defer():
            raise SystemExit(
                f"{cls.__module__}.{cls.__name__} needs a gunicorn whose threaded worker defers a "
                f"connection with nothing to read to its poller (gthread._DEFER); this is "
                f"gunicorn {gunicorn.__version__}: install the version constraints.txt pins."
            )

    def load_wsgi(self) -> None:
        super().load_wsgi()
        self.wsgi = closing_on_an_unread_body(self.wsgi)  # type: ignore[has-type]

    def enqueue_req(self, conn: Any) -> None:
        if not self.cfg.is_ssl:
            self._head_deadline(conn).arm(self.head_seconds)
        super().enqueue_req(conn)

    def handle(self, conn: Any) -> Any:
        if not conn.initialized and not conn.data_ready and not conn.wait_for_data(0):
            return gthread._DEFER  # back to the poller, no thread held (the class's own value)
        return super().handle(conn)

    @staticmethod
    def _head_deadline(conn: Any) -> HeadDeadline:
        reader = getattr(conn.parser, "unreader", None)
        holder, name = (reader, "sock") if reader is not None else (conn, "sock")
        sock = getattr(holder, name)
        if not isinstance(sock, HeadDeadline):
            sock = HeadDeadline(sock)
            setattr(holder, name, sock)
        return sock


# What gunicorn reads of a body the app left unread, before it serves the next request on the
# connection (`parser._DRAIN_MAX_BYTES`); past it, it closes the connection instead.
DRAINED_AT_MOST = getattr(gunicorn_parser, "_DRAIN_MAX_BYTES", 64 * 1024)


def closing_on_an_unread_body(app: Any) -> Any:
    """The WSGI app, its answer marked `Connection: close` when it leaves more of the request's
    body unread than gunicorn drains (a refusal before the body: 401, 403 `out_of_scope`, 404).
    gunicorn then closes the connection anyway, and its answer had said `keep-alive`: a client
    or a proxy reusing it met a reset connection on its next request (a helper's trial). A
    WSGI app cannot say `Connection` itself (gunicorn drops hop-by-hop headers); the response
    object gunicorn hands it `start_response` of can."""

    def served(environ: dict[str, Any], start_response: Any) -> Any:
        body = environ.get("wsgi.input")  # gunicorn's, before the app wraps it (config/wsgi.py)
        # A body sent chunked is never read (Django reads by Content-Length: refused 411).
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()

        def started(status: str, headers: Any, exc_info: Any = None) -> Any:
            response = getattr(start_response, "__self__", None)
            if response is not None and (chunked or unread_body(body) >= DRAINED_AT_MOST):
                response.force_close()  # gunicorn gives up at 64 KiB drained, not past it
            return start_response(status, headers, exc_info)

        return app(environ, started)

    return served


def unread_body(body: Any) -> int:
    """Bytes of a request's body (sent with a Content-Length) not read yet."""
    left = getattr(getattr(body, "reader", None), "length", 0)
    return left if isinstance(left, int) else 0


class Lingering:
    """Connections closed for writing, whose clients have `SECONDS` to close their side, what
    they still send read and dropped (so the kernel does not answer it with a reset, which could
    cut the answer short: `util.close_graceful`'s reason), then closed; waited for by the
    worker's poller, not its main thread. The worker's loop expires them at least once a
    second. `closed` is called once for each as it is closed: the worker counts a connection
    until then, so it accepts no more than `worker_connections` with these among them, and a
    worker that stops waits for them (its loop ends when none is left), as gunicorn's waited
    for its own close."""

    SECONDS = 2.0  # as `util.close_graceful`
    MOST = 65536  # bytes read from one before it is closed anyway, as there

    def __init__(self, closed: Callable[[], None] = lambda: None) -> None:
        self.deadlines: deque[tuple[float, socket.socket]] = deque()
        self.read: dict[socket.socket, int] = {}
        self.on_closed = closed

    def close(self, sock: Any, poller: selectors.BaseSelector) -> None:
        while isinstance(sock, _Deadline):
            sock = sock.sock
        try:
            sock.shutdown(socket.SHUT_WR)
            sock.setblocking(False)
            poller.register(sock, selectors.EVENT_READ, lambda s: self.readable(s, poller))
        except (OSError, ValueError, KeyError):  # the client is gone: nothing to wait for
            util.close(sock)
            self.on_closed()
            return
        self.read[sock] = 0
        self.deadlines.append((time.monotonic() + self.SECONDS, sock))

    def readable(self, sock: socket.socket, poller: selectors.BaseSelector) -> None:
        try:
            data = sock.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        self.read[sock] += len(data)
        if not data or self.read[sock] >= self.MOST:
            self.closed(sock, poller)

    def expire(self, poller: selectors.BaseSelector) -> None:
        now = time.monotonic()
        while self.deadlines and self.deadlines[0][0] <= now:
            _, sock = self.deadlines.popleft()
            if sock in self.read:
                self.closed(sock, poller)

    def closed(self, sock: socket.socket, poller: selectors.BaseSelector) -> None:
        del self.read[sock]
        with contextlib.suppress(OSError, KeyError, ValueError):
            poller.unregister(sock)
        util.close(sock)
        self.on_closed()


def can_defer() -> bool:
    """Whether gunicorn's threaded worker has the deferral `DeadlineThreadWorker` uses."""
    return (
        hasattr(gthread, "_DEFER")
        and hasattr(gthread.TConn, "wait_for_data")
        and hasattr(ThreadWorker, "on_pending_socket_readable")  # it sets `data_ready`
    )


def reading_body(reader: Any, seconds: int) -> None:
    """The head is read: its deadline is disarmed, and the body's reader gets its own."""
    sock = reader.sock
    if isinstance(sock, HeadDeadline):
        sock.disarm()
    reader.sock = BodyDeadline(sock, seconds)


def body_read(reader: Any) -> None:
    """The connection's next request (kept alive) is read without this one's body deadline."""
    if isinstance(reader.sock, BodyDeadline):
        reader.sock = reader.sock.sock
