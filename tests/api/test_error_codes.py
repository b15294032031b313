"""Every error code the application can answer is one of the stable codes of
`api.error_codes.ERROR_CODES` (whose README table tests/api/test_contract.py checks): the codes are
read from the source, in every form they are written, so a new code left out of the list fails
here."""

import re
from pathlib import Path

from api.error_codes import ERROR_CODES
from api.errors import _DRF_CODES

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("api", "config", "dedup", "palace", "review")
CODE_STRING = re.compile(r"""\bcode\s*=\s*["']([a-z_]+)["']""")
NOT_FOUND_OF = re.compile(r"""\bnot_found\(\s*["']([a-z_]+)["']\s*\)""")


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


def test_every_code_in_the_source_is_a_stable_code():
    unlisted = source_codes() - set(ERROR_CODES)
    assert not unlisted, f"codes missing from api/error_codes.py: {sorted(unlisted)}"


def test_the_reading_finds_codes_of_every_form():
    # Guards the regular expressions: a class attribute, a keyword, DRF's and the URL helper's.
    found = source_codes()
    assert {"empty_label", "invalid_id", "invalid_json", "drawer_not_found", "error"} <= found
