"""Every environment variable the configuration reads is in the README's settings table."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# os.environ.get("NAME"...), os.environ["NAME"], and the env_*/positive_int("NAME", ...) helpers.
READ = re.compile(
    r"""(?:os\.environ(?:\.get)?\s*[\(\[]\s*|\b(?:env_\w+|positive_int)\(\s*)["']([A-Z][A-Z0-9_]+)["']"""
)


def names_read() -> set[str]:
    return {
        name
        for path in (ROOT / "config").glob("*.py")
        if path.name != "settings_test.py"
        for name in READ.findall(path.read_text())
    } - {"DJANGO_SETTINGS_MODULE"}


def names_documented() -> set[str]:
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## Settings\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", table, flags=re.MULTILINE))


def test_every_setting_read_is_documented():
    read = names_read()
    assert {"SECRET_KEY", "CONN_MAX_AGE", "WEB_CONCURRENCY", "BIND"} <= read  # the pattern works
    assert read - names_documented() == set()


def test_nothing_documented_is_left_unread():
    assert names_documented() - names_read() == set()
