"""Every error code the API can answer has a row in the README's error-code table (issue 10,
item 19): the codes are read from the source, so a new code without a row fails here."""

import re
from pathlib import Path

from api.errors import _DRF_CODES

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("api", "config", "dedup", "palace", "review")
CODE_STRING = re.compile(r"""\bcode\s*=\s*["']([a-z_]+)["']""")
NOT_FOUND_OF = re.compile(r"""\bnot_found\(\s*["']([a-z_]+)["']\s*\)""")
TABLE_ROW = re.compile(r"^\| `([a-z_]+)` \| ([^|]+) \| ([^|]+) \|$")


def source_codes() -> set[str]:
    codes = {"error"} | set(_DRF_CODES.values())  # the handler's fallback and DRF's mapping
    for package in SOURCES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            text = path.read_text()
            codes |= set(CODE_STRING.findall(text))
            codes |= {f"{what}_not_found" for what in NOT_FOUND_OF.findall(text)}
    return codes


def readme_table() -> list[str]:
    lines = (ROOT / "README.md").read_text().splitlines()
    return [match[1] for line in lines if (match := TABLE_ROW.match(line))]


def test_every_code_in_the_source_has_a_row():
    missing = source_codes() - set(readme_table())
    assert not missing, f"codes without a row in the README's error-code table: {sorted(missing)}"


def test_the_table_is_sorted_by_code_and_has_each_code_once():
    codes = readme_table()
    assert codes == sorted(set(codes))


def test_the_reading_finds_codes_of_every_form():
    # Guards the regular expressions: a class attribute, a keyword, DRF's and the URL helper's.
    found = source_codes()
    assert {"empty_label", "invalid_id", "invalid_json", "drawer_not_found", "error"} <= found
