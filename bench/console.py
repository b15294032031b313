#!/usr/bin/env python
"""Console throughput: a curator decides items with the keyboard in Debian's Chromium (Playwright)
against gunicorn (production settings) on a database holding 100,000 open items, and the time
from the key press to the next item being interactive is measured in the page.

    .venv/bin/python bench/console.py [--sizes 100000] [--decisions 200]
        [--backends sqlite,postgresql] [--port N]

The queue is filled as the write path fills it, in bulk: nine drawer links for each entity pair;
each drawer link joins a sentence and a one-typo variant of it, with the verdict, similarity and
signals `policy.assess` gives them (what `drawer_write` stores); each entity pair two names two
edits apart with their keys, key similarity and edit distance (what `entity_resolve` stores).

"Interactive" is measured in the page: from the keydown (its event time) to the first frame
after htmx has swapped the next item in and settled it (its buttons are then live). A decision's
keys cycle through the item's own (m, d, x on a drawer link; a, m, d, x on an entity pair), so
merges, deleted links, dismissals and aliases are all timed. The first five decisions warm the
server up and are not counted. The POST and GET columns are the browser's Resource Timing of the
decision and of the next item's request (server time plus loopback).

BENCH_BASELINE=DIR also serves another checkout of Castellan (say `git archive main | tar -x -C
DIR`) on the same database (on --port + 1 when --port is given), and a second curator's page
decides on it in turn with this one, ten decisions at a time: the two rows are then measured
interleaved, under the same load.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import (
    ROOT,
    Vocabulary,
    arguments,
    drawer_row,
    fresh_database_url,
    one_typo,
    percentile,
    run_children,
    setup_django,
    table,
)

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
PASSWORD = "bench-curator-" + secrets.token_hex(4)
WARM_UP = 5
BLOCK = 10
THRESHOLD = 0.9
KEYS = {"d": "mdx", "e": "amdx"}

# Installed in every page: the keydown's time, then the first frame after the next item settles.
TIMER = """
window.__bench = {t0: 0, t1: 0, done: false, post: 0, get: 0};
function shownItem() {
  var item = document.querySelector(".item");
  return item && item.dataset.item;
}
document.addEventListener("keydown", function (event) {
  window.__bench = {t0: event.timeStamp, t1: 0, done: false, post: 0, get: 0, shown: shownItem()};
  performance.clearResourceTimings();
}, true);
document.addEventListener("htmx:afterSettle", function () {
  requestAnimationFrame(function () { setTimeout(function () {
    var b = window.__bench;
    if (shownItem() === b.shown) return;  // not the next item yet (a redirect's first answer)
    performance.getEntriesByType("resource").forEach(function (e) {
      if (e.startTime < b.t0) return;
      if (e.name.indexOf("/decide") !== -1) b.post = e.duration;
      else if (e.name.indexOf("/items/") !== -1) b.get = e.duration;
    });
    b.t1 = performance.now(); b.done = true;
  }, 0); });
});
"""


def drawer_pairs(rng: random.Random, vocabulary: Vocabulary, count: int) -> Iterator[tuple]:
    """Sentence, one-typo variant and the write path's assessment of the pair, when it links."""
    from dedup import policy

    made = 0
    while made < count:
        older = vocabulary.sentence()
        if all(len(word.strip(".")) < 5 for word in older.split()):
            continue  # no word long enough for a typo
        newer = one_typo(older, rng)
        assessment = policy.assess(
            policy.Text.of(newer), policy.Text.of(older), threshold=THRESHOLD
        )
        if assessment.verdict is not None:
            made += 1
            yield older, newer, assessment


def entity_pairs(vocabulary: Vocabulary, count: int, base: int) -> Iterator[tuple]:
    """Two names two edits apart ("possible match", never an automatic alias), with the key
    similarity and distance `entity_resolve` stores on the link."""
    from dedup import policy

    made = 0
    while made < count:
        first = vocabulary.rng.choice(vocabulary.words).capitalize()
        name = f"{first} {base + made}"
        other = name[:1] + name[2] + name[1] + name[3:] + "a"
        older_key, newer_key = policy.entity_key(name), policy.entity_key(other)
        distance = policy.edit_distance(older_key, newer_key)
        similarity = policy.key_similarity(older_key, newer_key, distance)
        if distance == 2 and similarity >= policy.POSSIBLE_SIMILARITY:
            made += 1
            yield (name, older_key), (other, newer_key), similarity, distance


def fill(size: int, rng: random.Random) -> None:
    """`size` open items: nine drawer links for each entity pair, over ten rooms."""
    from dedup import services
    from palace.models import Drawer, DrawerLink, Entity, EntityLink

    vocabulary = Vocabulary(rng)
    entity_count = size // 10
    rooms = [services.room_get_or_create(wing="bench", room=f"room{n}") for n in range(10)]
    for start in range(0, size - entity_count, 5000):
        batch = list(drawer_pairs(rng, vocabulary, min(5000, size - entity_count - start)))
        room = rooms[start // 5000 % 10]
        drawers = [drawer_row(room, text) for older, newer, _ in batch for text in (older, newer)]
        drawers = Drawer.objects.bulk_create(drawers, batch_size=2000)
        links = [
            DrawerLink(
                older=drawers[2 * i],
                newer=drawers[2 * i + 1],
                verdict=assessment.verdict,
                similarity=assessment.signals.similarity,
                signals=assessment.signals.as_dict(),
            )
            for i, (_, _, assessment) in enumerate(batch)
        ]
        DrawerLink.objects.bulk_create(links, batch_size=2000)
    pairs = list(entity_pairs(vocabulary, entity_count, Entity.objects.count()))
    entities = Entity.objects.bulk_create(
        [
            Entity(name=name, kind="person", key=key, key_length=len(key))
            for older, newer, _, _ in pairs
            for name, key in (older, newer)
        ],
        batch_size=2000,
    )
    EntityLink.objects.bulk_create(
        [
            EntityLink(
                older=entities[2 * i],
                newer=entities[2 * i + 1],
                similarity=similarity,
                distance=distance,
            )
            for i, (_, _, similarity, distance) in enumerate(pairs)
        ],
        batch_size=2000,
    )


def server_env(database_url: str, port: int, static_root: str) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "LANG", "TMPDIR"}},
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false",
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "STATIC_ROOT": static_root,
        "BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": os.environ.get("WEB_CONCURRENCY", "2"),
        "GUNICORN_THREADS": os.environ.get("GUNICORN_THREADS", "4"),
        "CONN_MAX_AGE": "60",
        "CASTELLAN_LOG_LEVEL": "WARNING",
    }


@contextlib.contextmanager
def gunicorn(database_url: str, port: int, root: Path = ROOT) -> Iterator[str]:
    static_root = tempfile.mkdtemp(prefix="castellan-bench-static-")
    env = server_env(database_url, port, static_root)
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--config", "config/gunicorn.py"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            if process.poll() is not None:
                raise SystemExit("gunicorn exited")
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"{url}/healthz", timeout=2)
                break
            time.sleep(0.3)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        shutil.rmtree(static_root, ignore_errors=True)


def decide(page, key: str) -> dict[str, float]:
    """Press a decision key on the item shown; wait for the next item, settled and painted."""
    shown = page.locator(".item").get_attribute("data-item")
    # A swapped-in item takes no decision for 450 ms (static/review/review.js: a double press
    # never decides an item not yet seen); the time measured starts at the keydown.
    page.wait_for_timeout(500)
    page.keyboard.press(key)
    page.wait_for_function(
        "shown => window.__bench.done && document.querySelector('.item')"
        " && document.querySelector('.item').dataset.item !== shown",
        arg=shown,
        timeout=30_000,
    )
    return page.evaluate("({ms: __bench.t1 - __bench.t0, post: __bench.post, get: __bench.get})")


def open_item_page(browser, url: str):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.add_init_script(TIMER)
    page.goto(f"{url}/accounts/login/")
    page.get_by_label("Username").fill("bench")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.locator("table.queue tr.row a").first.click()
    return page


def session(urls: dict[str, str], decisions: int) -> dict[str, list[dict[str, float]]]:
    """Each server's curator decides in turn, BLOCK decisions at a time, on the same queue: the
    servers meet the same load, and a page reloads the queue's first item before its block."""
    from playwright.sync_api import sync_playwright

    timings: dict[str, list[dict[str, float]]] = {label: [] for label in urls}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        pages = {label: open_item_page(browser, url) for label, url in urls.items()}
        for start in range(0, WARM_UP + decisions, BLOCK):
            for label, page in pages.items():
                if len(urls) > 1:
                    page.goto(f"{urls[label]}/")
                    page.locator("table.queue tr.row a").first.click()
                for n in range(start, min(start + BLOCK, WARM_UP + decisions)):
                    kind = (page.locator(".item").get_attribute("data-item") or "d")[0]
                    timings[label].append(decide(page, KEYS[kind][n % len(KEYS[kind])]))
        browser.close()
    return {label: values[WARM_UP:] for label, values in timings.items()}


def child(backend: str, args) -> None:
    database_url = fresh_database_url(backend)
    setup_django(database_url)
    from django.contrib.auth import get_user_model
    from django.db import connections

    from bench._common import settle
    from review.curators import curators_group

    user = get_user_model().objects.create_user("bench", password=PASSWORD)
    user.groups.add(curators_group())
    fill(args.sizes[0], random.Random(7))
    settle()
    connections.close_all()
    with contextlib.ExitStack() as servers:
        urls = {
            "this checkout": servers.enter_context(gunicorn(database_url, args.port or free_port()))
        }
        if os.environ.get("BENCH_BASELINE"):
            baseline = Path(os.environ["BENCH_BASELINE"]).resolve()
            urls[f"baseline ({baseline.name})"] = servers.enter_context(
                gunicorn(database_url, args.port + 1 if args.port else free_port(), baseline)
            )
        for label, timings in session(urls, args.decisions).items():
            ms = [t["ms"] for t in timings]
            row = {"backend": backend, "server": label, "size": args.sizes[0], "decisions": len(ms)}
            row |= {"p50": percentile(ms, 0.5), "p95": percentile(ms, 0.95), "max": max(ms)}
            row |= {key: percentile([t[key] for t in timings], 0.5) for key in ("post", "get")}
            print(json.dumps(row), flush=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def main() -> None:
    args = arguments(__doc__, sizes="100000", decisions=200, port=0)
    if args.child:
        child(args.child, args)
        return
    rows = [
        [r["backend"], r["server"], f"{r['size']:,}", r["decisions"]]
        + [f"{r[key]:.0f}" for key in ("p50", "p95", "max", "post", "get")]
        for r in run_children(__file__, args.backends)
    ]
    headers = ["backend", "server", "open items", "decisions", "p50 ms", "p95 ms", "max ms"]
    print(table([*headers, "POST decide p50 ms", "GET next p50 ms"], rows))


if __name__ == "__main__":
    main()
