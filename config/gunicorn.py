"""gunicorn's configuration: `gunicorn -c config/gunicorn.py` (the Procfile's `web`).

Sized from the environment so one image or checkout serves any machine:
- `WEB_CONCURRENCY` worker processes (default 2), each with `GUNICORN_THREADS` threads
  (default 4). Each thread may hold a database connection, so PostgreSQL's `max_connections`
  must exceed web processes x workers x threads, plus the db_workers.
- `BIND` (e.g. `127.0.0.1:8000` or `unix:/run/castellan.sock`) wins; else `PORT` binds every
  interface on that port (what Procfile runners and platforms set); else `127.0.0.1:8000`.
The access log goes to stdout and errors to stderr, for the process manager to collect.
- `PROMETHEUS_MULTIPROC_DIR`: where each worker keeps its metrics for `/metrics` to add up
  (prometheus-client's multiprocess mode); emptied when gunicorn starts. Unset, a fresh
  temporary directory is used.
- `GUNICORN_HEAD_TIMEOUT` (default 10): seconds a request's head has to arrive whole, counted
  from its first bytes; `GUNICORN_BODY_TIMEOUT` (default 30): its body, counted from its head
  (config/http_deadlines.py).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

# Set before prometheus-client is imported, here or in a worker, so every counter is written to
# a file per process and a scrape sees the sum over all workers.
os.environ["PROMETHEUS_MULTIPROC_DIR"] = os.environ.get(
    "PROMETHEUS_MULTIPROC_DIR", ""
).strip() or tempfile.mkdtemp(prefix="castellan-metrics-")

from gunicorn import util
from prometheus_client import multiprocess

from config.http_deadlines import (
    body_read,
    body_seconds,
    head_seconds,
    positive_int,
    reading_body,
    write_json_error,
)


def bind_address() -> str:
    if bind := os.environ.get("BIND", "").strip():
        return bind
    if port := os.environ.get("PORT", "").strip():
        return f"0.0.0.0:{port}"
    return "127.0.0.1:8000"


wsgi_app = "config.wsgi:application"
bind = [bind_address()]
workers = positive_int("WEB_CONCURRENCY", 2)
threads = positive_int("GUNICORN_THREADS", 4)
# With threads > 1, gunicorn's threaded worker, reading each head within its deadline; with one,
# its sync worker, whose process gunicorn restarts when a request holds it past `timeout`.
worker_class = "config.http_deadlines.DeadlineThreadWorker" if threads > 1 else "sync"
accesslog = "-"
errorlog = "-"
# The request line with the time it took in microseconds, after the usual combined format.
access_log_format = '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s" %(D)s'
# gunicorn's control socket has one default path per user, which a second gunicorn on the same
# machine would take over; nothing here uses it.
control_socket_disable = True
# Give a write that takes the advisory lock time to finish on a restart before it is cut off.
graceful_timeout = 30


# Each thread reads a request's head and body within deadlines (config/http_deadlines.py).
head_timeout = head_seconds()
body_timeout = body_seconds()


def pre_request(worker: Any, req: Any) -> None:
    """The head is read: the body's reader gets its deadline."""
    worker.log.debug("%s %s", req.method, req.path)
    unreader = getattr(req, "unreader", None)
    if unreader is not None and hasattr(unreader, "sock"):
        reading_body(unreader, body_timeout)


def post_request(worker: Any, req: Any, environ: Any, resp: Any) -> None:
    """The connection's next request (kept alive) is read without this one's deadline."""
    unreader = getattr(req, "unreader", None)
    if unreader is not None and hasattr(unreader, "sock"):
        body_read(unreader)


def on_starting(server: Any) -> None:
    """Counters left by an earlier run would be added to this one's: start from none."""
    directory = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink()


def child_exit(server: Any, worker: Any) -> None:
    """A worker that exits stops counting towards the live gauges (its counters are kept)."""
    multiprocess.mark_process_dead(worker.pid)


# gunicorn refuses a request it cannot parse (a request line over 4,094 bytes, too many or too
# large headers, a NUL in a header, a malformed request line) itself, before Django sees it, with
# an HTML page of its own, and has no setting for that page (benoitc/gunicorn#993). Every refusal
# of outside input is `{"error", "code"}` JSON here, so each worker replaces gunicorn's one writer
# of those pages (`util.write_error`, called only by `Worker.handle_error`): the same status and
# reason, a JSON body, whatever the path (the request was not read far enough to tell the API's).
def post_worker_init(worker: Any) -> None:
    util.write_error = write_json_error
