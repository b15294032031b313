"""A real headless Chromium (Debian's package) driven by Playwright against a live server."""

import os
import shutil
import time
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
OUTPUT = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="package")
def browser():
    """One Chromium for the package, stopped with it: Playwright's event loop must not outlive
    the browser tests (Django refuses database calls from a thread with a running loop)."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"Chromium is not installed at {CHROMIUM}; .ci/run installs it.")
        pytest.skip("Chromium is not installed (apt-get install chromium); browser tests skipped.")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="package", autouse=True)
def allow_database_beside_playwright():
    """Playwright's sync API runs an event loop in this thread; the test's own database calls
    are still synchronous and made between browser steps. Set for this package only, and for
    all of it: the database is flushed after each test's own teardown."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture
def curator(dedup_settings, django_user_model):
    """`cora`, a member of the curators group (may decide), password `secret-pass-1`."""
    from django.contrib.auth.models import Group, Permission

    user = django_user_model.objects.create_user("cora", password="secret-pass-1")
    group, _ = Group.objects.get_or_create(name="curators")
    group.permissions.add(Permission.objects.get(codename="decide"))
    user.groups.add(group)
    return user


@pytest.fixture
def page(browser):
    """A page of a fresh browser context, closed once no request of it is in flight: an htmx
    request fired at a test's end, still served when the database is flushed, made SQLite's
    shared in-memory database refuse the flush ("database table is locked", once in CI with
    both suites running). Playwright's "networkidle" does not wait for it once reached."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    in_flight: set = set()
    page.on("request", lambda request: in_flight.add(request))
    page.on("requestfinished", lambda request: in_flight.discard(request))
    page.on("requestfailed", lambda request: in_flight.discard(request))
    yield page
    deadline = time.monotonic() + 5
    while in_flight and time.monotonic() < deadline:
        page.wait_for_timeout(50)  # lets Playwright deliver the requests' events
    context.close()


@pytest.fixture
def screenshot(page):
    OUTPUT.mkdir(parents=True, exist_ok=True)

    def take(name: str) -> Path:
        path = OUTPUT / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
