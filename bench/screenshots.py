#!/usr/bin/env python
"""Regenerate the console screenshots in docs/ from the demo data, in Debian's Chromium:

    docs/queue.png    the review queue, most uncertain first: each row shows the changed words
    docs/item.png     an item (a drawer link whose texts differ in a number), at 1440x900
    docs/cluster.png  a cluster item, when the console has clusters (skipped if it has none)

    .venv/bin/python bench/screenshots.py [--url http://127.0.0.1:8000] [--out docs]

Without --url it migrates a fresh SQLite database, runs `seed_demo` and starts `runserver` on a
free port, then stops it. With --url it uses a running console whose demo curator is
curator / castellan-demo (`make run`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import ROOT

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
WIDTH, HEIGHT = 1440, 900
USER, PASSWORD = "curator", "castellan-demo"


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True
    )


@contextlib.contextmanager
def demo_server() -> Iterator[str]:
    """A throwaway console on the demo data: fresh SQLite, `seed_demo`, `runserver`."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    database = Path(tempfile.mkdtemp(prefix="castellan-shots-")) / "demo.sqlite3"
    env = {
        **os.environ,
        "DEBUG": "true",
        "DATABASE_URL": f"sqlite:///{database}",
        "CASTELLAN_LOG_LEVEL": "WARNING",
    }
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo")
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"{url}/healthz", timeout=2)
                break
            time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def log_in(page, url: str) -> None:
    page.goto(f"{url}/accounts/login/")
    page.get_by_label("Username").fill(USER)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/$|/\?"))


def first_item(page, url: str, query: str, pattern: str) -> str | None:
    """The first item of a queue filter whose id matches the pattern, or None."""
    response = page.goto(f"{url}/?{query}")
    if response is None or response.status != 200:
        return None
    for href in page.locator("table.queue tbody tr.row a").evaluate_all(
        "els => els.map(e => e.getAttribute('href'))"
    ):
        if re.search(pattern, href or ""):
            return href
    return None


def shoot(url: str, out: Path) -> list[str]:
    from playwright.sync_api import sync_playwright

    taken = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        log_in(page, url)
        page.goto(f"{url}/?order=uncertain")
        page.screenshot(path=str(out / "queue.png"))
        taken.append("queue.png")
        # A drawer link whose texts differ in a number: the diff, the warning, the buttons.
        item = first_item(page, url, "type=drawer&q=port", r"/items/d\d+/")
        item = item or first_item(page, url, "type=drawer", r"/items/d\d+/")
        if item:
            page.goto(f"{url}{item}")
            page.screenshot(path=str(out / "item.png"))
            taken.append("item.png")
        # A cluster of linked items (the demo has some): shot only where one exists.
        cluster = first_item(page, url, "type=cluster", r"/clusters/[de]\d+/")
        response = page.goto(f"{url}{cluster}") if cluster else None
        if response is not None and response.status == 200:
            page.screenshot(path=str(out / "cluster.png"))
            taken.append("cluster.png")
        else:
            print("no cluster item in this console: docs/cluster.png skipped", file=sys.stderr)
        browser.close()
    return taken


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", help="a running console (default: start one on demo data)")
    parser.add_argument("--out", default=str(ROOT / "docs"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with contextlib.nullcontext(args.url) if args.url else demo_server() as url:
        for name in shoot(url.rstrip("/"), out):
            print(out / name)


if __name__ == "__main__":
    main()
