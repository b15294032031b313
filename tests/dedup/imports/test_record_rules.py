"""An import's records are held to the rules a REST body is: a line Python's decoder refuses is
reported malformed in the REST API's words, not Python's."""

import json
from pathlib import Path

import pytest

from dedup import imports
from palace.models import Drawer, Entity, Import, Room, Wing

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


# Lines a REST body's rules refuse, which an import stored: NaN in a field the record does not
# use, a number where a text goes (stored as its digits), a name of another type.
UNLIKE_A_BODY = {
    "NaN in an extra field": (
        json.dumps(GOOD)[:-1] + ', "score": NaN}',
        "not JSON: Out of range float values are not JSON compliant: 'NaN'",
    ),
    "-Infinity": (
        json.dumps(GOOD)[:-1] + ', "score": -Infinity}',
        "not JSON: Out of range float values are not JSON compliant: '-Infinity'",
    ),
    "a number beyond a float": (
        json.dumps(GOOD)[:-1] + ', "score": 1e400}',
        "not JSON: a number beyond a float's range (1e400).",
    ),
    "content a number": (json.dumps({**GOOD, "content": 5}), "content must be a string"),
    "content a list": (json.dumps({**GOOD, "content": ["x"]}), "content must be a string"),
    "id true": (json.dumps({**GOOD, "id": True}), "id must be a string or an integer"),
    "id a float": (json.dumps({**GOOD, "id": 1.5}), "id must be a string or an integer"),
    "wing a number": (json.dumps({**GOOD, "wing": 7}), "wing must be a string"),
    "room an object": (json.dumps({**GOOD, "room": {"a": 1}}), "room must be a string"),
    "name a number": (json.dumps({**GOOD, "name": 5}), "name must be a string"),
    "kind a list": (json.dumps({**GOOD, "kind": ["note"]}), "kind must be a string"),
    "agent false": (json.dumps({**GOOD, "agent": False}), "agent must be a string"),
}


@pytest.mark.parametrize(("line", "reason"), UNLIKE_A_BODY.values(), ids=UNLIKE_A_BODY.keys())
def test_a_line_a_body_s_rules_refuse_is_malformed(tmp_path, line, reason):
    tally = run(jsonl(tmp_path, line, json.dumps(GOOD)))
    assert tally.errors == [{"file": "records.jsonl", "line": 1, "error": reason}]
    assert list(Drawer.objects.values_list("content", flat=True)) == [GOOD["content"]]


def test_an_integer_id_is_a_source_id(tmp_path):
    """JSONL files number their records: an id of digits is kept, as text."""
    tally = run(jsonl(tmp_path, json.dumps({**GOOD, "id": 7})))
    assert tally.errors == []
    assert Drawer.objects.get().source == {"format": "jsonl", "id": "7"}


def castellan_drawer(**fields) -> str:
    drawer = {"type": "drawer", "wing": "notes", "room": "r", "valid_from": None, "valid_to": None}
    return json.dumps({**drawer, **{k: v for k, v in GOOD.items() if k != "wing"}, **fields})


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (castellan_drawer(source="notes.md"), "source must be a JSON object"),
        (
            castellan_drawer(id="n")[:-1] + ', "source": {"score": NaN}}',
            "not JSON: Out of range float values are not JSON compliant: 'NaN'",
        ),
        (json.dumps({"type": "entity", "name": 5, "kind": "tool"}), "name must be a string"),
        (
            json.dumps({"type": "entity", "name": "Redis", "kind": "tool", "aliases": ["R"]}),
            "aliases must be a list of objects {alias, source}",
        ),
        (
            json.dumps({"type": "mention", "drawer": "g", "name": "Redis", "kind": 1}),
            "kind must be a string",
        ),
    ],
    ids=["source a string", "NaN in a source", "entity name", "aliases", "mention kind"],
)
def test_a_castellan_line_a_body_s_rules_refuse_is_malformed(tmp_path, line, reason):
    """On PostgreSQL, a source holding NaN failed the whole import (its JSON column refuses
    it); elsewhere it was stored."""
    tally = run(jsonl(tmp_path, castellan_drawer(), line), format="castellan")
    assert tally.errors == [{"file": "records.jsonl", "line": 2, "error": reason}]
    assert Drawer.objects.count() == 1


def test_a_mem0_memory_s_own_fields_are_strings_its_metadata_free(tmp_path):
    """mem0's `user_id` is a string; its `metadata` is the user's own: a `category` that is no
    string names no room, and the memory is filed as one without it."""
    memories = [
        {"id": "a", "memory": "Owned by a number.", "user_id": 42},
        {
            "id": "b",
            "memory": "Filed by its categories.",
            "user_id": "u",
            "metadata": {"category": 3},
            "categories": ["work"],
        },
        {"id": "c", "memory": "Filed in general.", "user_id": "u", "metadata": {"category": ["x"]}},
    ]
    path = tmp_path / "memories.json"
    path.write_text(json.dumps({"results": memories}))
    tally = run(path, format="mem0")
    assert tally.errors == [
        {"file": "memories.json", "line": 1, "error": "user_id must be a string"}
    ]
    filed = dict(Drawer.objects.values_list("content", "room__name"))
    assert filed == {"Filed by its categories.": "work", "Filed in general.": "general"}


def test_a_mempalace_record_s_room_is_a_string(tmp_path):
    line = {"id": "m", "document": "Filed in room five.", "metadata": {"wing": "w", "room": 5}}
    path = tmp_path / "export.jsonl"
    path.write_text(json.dumps(line) + "\n")
    tally = run(path, format="mempalace")
    assert tally.errors == [{"file": "export.jsonl", "line": 1, "error": "room must be a string"}]


def test_a_dry_run_refuses_the_names_the_import_refuses(tmp_path):
    """A new wing or room of fillers only is blank, a wing no key can name is refused; a wing
    stored so before is written into, a new room in it made (a dry run made no wing: it looks
    the stored one up)."""
    Wing.objects.create(name="\u3164")  # stored before new names lost their fillers
    records = [
        {**GOOD, "id": "star", "wing": "*"},
        {**GOOD, "id": "blank wing", "wing": "\u3164\u3164"},
        {**GOOD, "id": "blank room", "room": "\u115f"},
        {**GOOD, "id": "slash", "wing": "x/y", "room": "a/b"},
        {**GOOD, "id": "stored", "wing": "\u3164", "room": "new"},
    ]
    path = jsonl(tmp_path, *map(json.dumps, records))
    checked = imports.import_run(Import(source="x", format="jsonl"), path=path, dry_run=True)
    written = run(path)
    reasons = [(e["line"], e["error"]) for e in written.errors]
    assert reasons == [
        (1, "wing must not be '*' nor contain ',' (an agent key's wings are written so)."),
        (2, "wing must not be blank."),
        (3, "room must not be blank."),
    ]
    assert [(e["line"], e["error"]) for e in checked.errors] == reasons
    assert (checked.created, written.created) == (2, 2)
    rooms = set(Room.objects.values_list("wing__name", "name"))
    assert rooms == {("x/y", "a/b"), ("\u3164", "new")}


@pytest.mark.parametrize(
    "aliases",
    [[{"alias": "Ada L."}], [{"alias": "Ada L.", "source": "bogus"}], "Ada L."],
    ids=["no source", "an unknown source", "not a list"],
)
def test_an_entity_line_whose_aliases_are_malformed_records_nothing(tmp_path, aliases):
    """The line was reported malformed but its entity recorded (a review found it)."""
    line = {"type": "entity", "name": "Ada Lovelace", "kind": "person", "aliases": aliases}
    tally = run(jsonl(tmp_path, json.dumps(line)), format="castellan")
    assert [error["line"] for error in tally.errors] == [1]
    assert not Entity.objects.exists()
