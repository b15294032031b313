"""An import's records are held to the rules a REST body is: a line Python's decoder refuses is
reported malformed in the REST API's words, not Python's."""

import json
from pathlib import Path

import pytest

from dedup import imports
from palace.models import Drawer

pytestmark = pytest.mark.django_db

GOOD = {"id": "g", "content": "The good line is stored.", "wing": "notes"}


def jsonl(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "records.jsonl"
    path.write_bytes("\n".join(lines).encode("utf-8", errors="surrogatepass") + b"\n")
    return path


def run(path: Path, format: str = "jsonl", **options) -> imports.Tally:
    imported = imports.import_create(source=str(path), format=format, **options)
    return imports.import_run(imported, path=path)


# Python's words were "Unexpected UTF-8 BOM (decode using utf-8-sig)", "use
# sys.set_int_max_str_digits() to increase the limit" and "maximum recursion depth exceeded
# while decoding a JSON array from a unicode string" (the attack trial).
UNDECODABLE = {
    "a byte order mark": (
        "\ufeff" + json.dumps({**GOOD, "id": "a"}),
        "not JSON: a byte order mark (U+FEFF) before the JSON: save the file as UTF-8 without one.",
    ),
    "5,000 digits": (
        json.dumps({**GOOD, "id": "b"})[:-1] + ', "n": ' + "9" * 5000 + "}",
        "not JSON: an integer of more than 4300 digits.",
    ),
    "nested 3,000 levels": (
        json.dumps({**GOOD, "id": "c"})[:-1] + ', "n": ' + "[" * 3000 + "]" * 3000 + "}",
        "nested deeper than 32 levels",
    ),
}


@pytest.mark.parametrize(("line", "reason"), UNDECODABLE.values(), ids=UNDECODABLE.keys())
def test_a_line_the_decoder_refuses_is_malformed_in_the_apis_words(tmp_path, line, reason):
    tally = run(jsonl(tmp_path, line, json.dumps(GOOD)))
    assert tally.errors == [{"file": "records.jsonl", "line": 1, "error": reason}]
    assert list(Drawer.objects.values_list("content", flat=True)) == [GOOD["content"]]
