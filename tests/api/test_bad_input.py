"""Bad input from outside, over every write endpoint and every filter: each is refused with a
clear `{error, code}` (HTML with the message on the console), and nothing is written in any
table. A 500 anywhere here is a failure."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from django.test import Client

from dedup import imports
from tests.api.conftest import api_client, row_counts

pytestmark = pytest.mark.django_db

NUL = "bad\u0000text"
SURROGATE = "bad\ud800text"
DEEP = "[" * 1000 + "]" * 1000


@dataclass(frozen=True)
class Write:
    """A write endpoint, a valid body, and where a bad string or enum value goes."""

    path: str
    body: dict
    text: str  # a string field (a dotted path into the body)
    enums: dict = field(default_factory=dict)  # field -> a value outside the enum
    numbers: dict = field(default_factory=dict)  # field -> a value out of range

    def with_value(self, dotted: str, value: object) -> dict:
        body = json.loads(json.dumps(self.body))
        *parents, last = dotted.split(".")
        target = body
        for name in parents:
            target = target[int(name)] if name.isdigit() else target[name]
        target[last] = value
        return body


WRITES = {
    "drawer": Write(
        "/api/wings/ops/rooms/dev/drawers", {"content": "The backups run at noon."}, "content"
    ),
    "drawer source": Write(
        "/api/wings/ops/rooms/dev/drawers",
        {"content": "The backups run at noon.", "source": {"via": "cli"}},
        "source.via",
    ),
    "diary": Write("/api/diary", {"wing": "notes", "content": "Slept well."}, "wing"),
    "checkpoint": Write(
        "/api/checkpoints",
        {
            "id": "cp-1",
            "items": [{"content": "Deploys are on Tuesdays.", "destination": "general"}],
        },
        "items.0.content",
        enums={"items.0.destination": "bogus"},
    ),
    "checkpoint id": Write(
        "/api/checkpoints",
        {
            "id": "cp-1",
            "items": [{"content": "Deploys are on Tuesdays.", "destination": "general"}],
        },
        "id",
    ),
    "mention": Write(
        "/api/drawers/{drawer}/mentions", {"name": "PostgreSQL", "kind": "tool"}, "name"
    ),
    "mention provenance": Write(
        "/api/drawers/{drawer}/mentions",
        {"name": "PostgreSQL", "provenance": {"page": "one"}},
        "provenance.page",
    ),
    "alias": Write("/api/entities/{entity}/aliases", {"alias": "Kat"}, "alias"),
    "decision": Write(
        "/api/review/items/{item}/decisions",
        {"action": "dismiss", "note": "fine"},
        "note",
        enums={"action": "bogus"},
    ),
    "revert": Write("/api/review/decisions/{decision}/revert", {"note": "oops"}, "note"),
    "sweep": Write("/api/sweeps", {"wing": "ops"}, "wing", numbers={"threshold": 5}),
    "apply": Write(
        "/api/sweeps/{run}/apply",
        {"threshold": 0.95},
        "tiers.0",
        enums={"tiers": ["bogus"]},
        numbers={"threshold": -1},
    ),
    "supersede": Write("/api/drawers/{drawer}/supersede", {"by": None}, "by"),
}


def body_cases():
    for label, case in WRITES.items():
        field_name = case.text.split(".")[-1]
        if label == "apply":  # tiers holds no string until one is given
            yield (
                f"{label} NUL",
                case,
                json.dumps({**case.body, "tiers": [NUL]}),
                "invalid",
                "tiers",
            )
        else:
            for kind, value in (("NUL", NUL), ("surrogate", SURROGATE)):
                body = json.dumps(case.with_value(case.text, value))
                yield f"{label} {kind}", case, body, "invalid", field_name
        yield (
            f"{label} deep",
            case,
            json.dumps(case.body)[:-1] + f', "deep": {DEEP}}}',
            "invalid_json",
            "nested",
        )
        yield (
            f"{label} unknown",
            case,
            json.dumps({**case.body, "nmae": "runbook"}),
            "invalid",
            "nmae",
        )
        for dotted, value in {**case.enums, **case.numbers}.items():
            name = (
                dotted.split(".")[-1]
                if not dotted.split(".")[-1].isdigit()
                else dotted.split(".")[0]
            )
            yield (
                f"{label} {name}",
                case,
                json.dumps(case.with_value(dotted, value)),
                "invalid",
                name,
            )


BODY_CASES = list(body_cases())


@pytest.mark.parametrize(
    ("case", "body", "code", "named"), [c[1:] for c in BODY_CASES], ids=[c[0] for c in BODY_CASES]
)
def test_bad_bodies_are_refused_and_write_nothing(world, case, body, code, named):
    client = api_client(world)
    before = row_counts()
    response = client.post(case.path.format(**world), body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == code
    assert named in response.json()["error"]
    assert row_counts() == before


@pytest.mark.parametrize("body", ["null", "[]", "0", "false", '""'])
@pytest.mark.parametrize("label", list(WRITES))
def test_a_body_that_is_no_object_is_refused_and_writes_nothing(world, label, body):
    client = api_client(world)
    before = row_counts()
    response = client.post(
        WRITES[label].path.format(**world), body, content_type="application/json"
    )
    assert response.json()["code"] == "invalid"
    assert row_counts() == before


# Bodies Python's decoder refuses, with the words the sender is told: Python's own spoke to a
# Python programmer ("decode using utf-8-sig", "use sys.set_int_max_str_digits()", "'utf-8'
# codec can't decode").
UNDECODABLE = {
    "a byte order mark": (b'\xef\xbb\xbf{"text": "x"}', "a byte order mark (U+FEFF) before"),
    "5,000 digits": (b'{"text": ' + b"9" * 5000 + b"}", "an integer of more than 4300 digits."),
    "UTF-16": ('{"text": "x"}'.encode("utf-16"), "not UTF-8 (the byte 0xff at 0)."),
    "Latin-1": ('{"text": "caf\u00e9"}'.encode("latin-1"), "not UTF-8 (the byte 0xe9 at 13)."),
    "NaN": (b'{"text": NaN}', "not JSON compliant: 'NaN'"),
}


@pytest.mark.parametrize(("body", "words"), UNDECODABLE.values(), ids=UNDECODABLE.keys())
def test_a_body_the_decoder_refuses_is_invalid_json_in_the_senders_terms(world, body, words):
    before = row_counts()
    response = api_client(world).post(
        WRITES["drawer"].path.format(**world), body, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_json"
    assert words in response.json()["error"]
    assert row_counts() == before


# A value of another JSON type, which DRF's fields would have coerced.
TYPE_CASES = {
    "drawer id true": ("drawer", "id", True),
    "drawer id number": ("drawer", "id", 5),
    "supersede by true": ("supersede", "by", True),
    "sweep threshold text": ("sweep", "threshold", "0.9"),
    "sweep entities 0": ("sweep", "entities", 0),
    "sweep same_kind yes": ("sweep", "same_kind", "yes"),
    "sweep wing number": ("sweep", "wing", 5),
    "apply threshold true": ("apply", "threshold", True),
    "apply merge 1": ("apply", "merge", 1),
    "revert cascade yes": ("revert", "cascade", "yes"),
    "decision note number": ("decision", "note", 5),
}


@pytest.mark.parametrize(("label", "name", "value"), TYPE_CASES.values(), ids=TYPE_CASES.keys())
def test_a_value_of_another_type_is_refused_and_writes_nothing(world, label, name, value):
    case = WRITES[label]
    before = row_counts()
    response = api_client(world).post(
        case.path.format(**world), case.with_value(name, value), content_type="application/json"
    )
    assert response.json()["code"] == "invalid"
    assert name in response.json()["error"]
    assert row_counts() == before


PATH_CASES = {
    "room write": ("post", "/api/wings/o%00ps/rooms/dev/drawers"),
    "wing": ("get", "/api/wings/a%00"),
    "drawer delete": ("delete", "/api/drawers/%00"),
    "drawer read": ("get", "/api/drawers/{drawer}%00"),
    "decision item": ("post", "/api/review/items/d1%00/decisions"),
    "entity aliases": ("post", "/api/entities/%00/aliases"),
}


def sent(client: Client, method: str, url: str, body: dict, **extra: str):
    """A GET as it is; a request of another method with `body` as JSON."""
    if method == "get":
        return client.get(url, **extra)
    data = json.dumps(body)
    return getattr(client, method)(url, data, content_type="application/json", **extra)


@pytest.mark.parametrize(("method", "path"), PATH_CASES.values(), ids=PATH_CASES.keys())
def test_nul_in_a_path_segment_is_refused(world, method, path):
    client = api_client(world)
    before = row_counts()
    body = {"content": "The backups run at noon.", "alias": "x", "action": "dismiss"}
    response = sent(client, method, path.format(**world), body)
    assert response.status_code == 400
    assert response.json() == {"error": f"path: {UNSTORABLE}", "code": "invalid"}
    assert row_counts() == before


UNSTORABLE = "Must not contain NUL characters or lone surrogates."

NOT_UTF8_CASES = {
    "a wing's name": ("post", "/api/wings/%ff/rooms/r/drawers", "path"),
    "an overlong slash": ("get", "/api/wings/a%c0%af", "path"),
    "a search": ("get", "/api/search?q=%c0%afabc", "query"),
    "a surrogate": ("get", "/api/search?q=%ed%a0%80abc", "query"),
    "a console page": ("get", "/?q=%ff", "query"),
}


@pytest.mark.parametrize(("method", "url", "part"), NOT_UTF8_CASES.values(), ids=NOT_UTF8_CASES)
def test_percent_escapes_that_are_not_utf8_are_refused(world, method, url, part):
    """Django kept `%FF` in a path as text (a wing named `%FF` was made) and read U+FFFD for a
    broken escape in a query: refused at the edge, naming the part."""
    client = api_client(world)
    before = row_counts()
    # RAW_URI: the request target as gunicorn hands it on.
    response = sent(client, method, url, {"content": "The backups run at noon."}, RAW_URI=url)
    assert response.status_code == 400
    assert f"The {part} is not UTF-8 once percent-decoded" in response.content.decode()
    assert row_counts() == before


def test_well_formed_percent_escapes_still_reach_the_view(world):
    url = "/api/search?q=%E4%BC%9A%E8%AD%B0+backups"
    response = api_client(world).get(url, RAW_URI=url)
    assert response.status_code == 200


@pytest.mark.parametrize("path", ["/api/drawers/{drawer}/supersede", "/api/sweeps"])
def test_a_chunked_body_is_refused_not_read_as_empty(world, path):
    """Django reads a body by its Content-Length: sent chunked, a supersede ran without its
    `by` and a sweep of one room swept every wing. Refused, and nothing written."""
    client = api_client(world)
    before = row_counts()
    response = client.post(
        path.format(**world),
        "",
        content_type="application/json",
        HTTP_TRANSFER_ENCODING="chunked",
    )
    assert response.status_code == 411
    assert response.json()["code"] == "unsupported_request"
    assert row_counts() == before


FILTER_CASES = {
    "entities name NUL": ("/api/entities?name=%00", "invalid", "name"),
    "entities kind NUL": ("/api/entities?kind=%00", "invalid", "kind"),
    "room drawers all NUL": ("/api/wings/ops/rooms/dev/drawers?all=%00", "invalid", "all"),
    "queue q NUL": ("/api/review/queue?q=%00", "invalid", "q"),
    "queue wing NUL": ("/api/review/queue?wing=a%00", "invalid", "wing"),
    "queue run superscript": ("/api/review/queue?run=%C2%B2", "invalid_id", "run"),
    "queue run too large": ("/api/review/queue?run=99999999999999999999999", "invalid_id", "run"),
    "queue similarity nan": ("/api/review/queue?min_similarity=nan", "invalid", "min_similarity"),
    "queue status bogus": ("/api/review/queue?status=bogus", "invalid", "status"),
    "queue order bogus": ("/api/review/queue?order=bogus", "invalid", "order"),
    "decisions actor NUL": ("/api/review/decisions?actor=%00", "invalid", "actor"),
    "decisions item NUL": ("/api/review/decisions?item=%00", "invalid", "item"),
    "decisions until overflow": ("/api/review/decisions?until=9999-12-31", "invalid", "until"),
    "decisions since malformed": ("/api/review/decisions?since=2026-13-01", "invalid", "since"),
    "proposals tier NUL": ("/api/sweeps/{run}/proposals?tier=%00", "invalid", "tier"),
    "parameter name NUL": ("/api/entities?na%00me=x", "invalid", "query"),
    "room drawers all maybe": ("/api/wings/ops/rooms/dev/drawers?all=maybe", "invalid", "all"),
    "proposals tier bogus": ("/api/sweeps/{run}/proposals?tier=bogus", "invalid", "tier"),
    "proposals status bogus": ("/api/sweeps/{run}/proposals?status=bogus", "invalid", "status"),
    "page size text": ("/api/review/decisions?page_size=abc", "invalid", "page_size"),
    "page size zero": ("/api/wings/ops/rooms/dev/drawers?page_size=0", "invalid", "page_size"),
    "page size negative": ("/api/entities?page_size=-5", "invalid", "page_size"),
}


@pytest.mark.parametrize(("url", "code", "named"), FILTER_CASES.values(), ids=FILTER_CASES.keys())
def test_bad_filters_are_refused(world, url, code, named):
    client = api_client(world)
    before = row_counts()
    response = client.get(url.format(**world))
    assert response.status_code == 400
    assert response.json()["code"] == code
    assert response.json()["error"].startswith(named)
    assert row_counts() == before


CONSOLE_CASES = {
    # The console names a field by the label a curator sees, where the API names the parameter.
    "queue q NUL": ("/?q=%00", "q: Must not contain NUL"),  # refused at the edge, as the API
    "queue run superscript": ("/?run=%C2%B2", "“Sweep proposals” must be a sweep"),
    "queue run too large": ("/?run=99999999999999999999999", "“Sweep proposals” must be a sweep"),
    "audit actor NUL": ("/audit/?actor=%00", "actor: Must not contain NUL"),
    "audit until overflow": ("/audit/?until=9999-12-31", "“Until” must be a date"),
    "item NUL": ("/items/d1%00/", "path: Must not contain NUL"),
}


@pytest.mark.parametrize(("url", "message"), CONSOLE_CASES.values(), ids=CONSOLE_CASES.keys())
def test_console_shows_a_clear_message_for_bad_filters(world, url, message):
    client = Client(raise_request_exception=False)
    client.force_login(world["user"])
    before = row_counts()
    response = client.get(url)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert row_counts() == before


def test_console_form_field_with_nul_is_refused(world):
    client = Client(raise_request_exception=False)
    client.force_login(world["user"])
    before = row_counts()
    response = client.post(f"/items/{world['item']}/decide", {"action": "dismiss", "note": NUL})
    assert response.status_code == 400
    assert "note: Must not contain NUL" in response.content.decode()
    assert row_counts() == before


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/", "/bulk", "/items/d1/decide"])
def test_a_console_form_in_another_charset_is_refused(world, path):
    # Django refuses to read such a form at every try, its error page's CSRF check included.
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    client.cookies["csrftoken"] = "abcdefghijklmnopqrstuvwxyz012345"
    before = row_counts()
    response = client.post(
        path, b"a=b", content_type="application/x-www-form-urlencoded; charset=utf-16"
    )
    assert response.status_code == 400
    assert "UTF-8" in response.content.decode()
    assert row_counts() == before


@pytest.mark.parametrize("note", [b"%ED%A0%80", b"%FF", b"caf%E9"])
def test_a_console_form_field_that_is_not_utf8_is_refused_not_stored_as_replacements(world, note):
    """A curator's trial: a decision posted with `note=%ED%A0%80` dismissed the item and stored
    the note as three U+FFFD; the same bytes in a query string were refused."""
    client = Client(raise_request_exception=False)
    client.force_login(world["user"])
    before = row_counts()
    response = client.post(
        f"/items/{world['item']}/decide",
        b"action=dismiss&note=" + note,
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 400
    assert "UTF-8" in response.content.decode()
    assert row_counts() == before


def test_audit_page_cursor_beyond_any_id_is_an_empty_page_not_an_error(world):
    client = Client(raise_request_exception=False)
    client.force_login(world["user"])
    assert client.get("/audit/?before=99999999999999999999999").status_code == 200
    assert client.get("/audit/?before=%C2%B2").status_code == 200


@pytest.mark.parametrize(
    ("path", "field_name"),
    [("/api/drawers/{drawer}/mentions", "name"), ("/api/entities/{entity}/aliases", "alias")],
)
def test_a_name_whose_folded_key_outgrows_its_column_is_refused(world, path, field_name):
    """200 characters, within a name's bound, but "ß" folds to "ss": a key of 400 would not fit
    the key column (PostgreSQL refused it with a 500), and cutting it would make two keys one."""
    client = api_client(world)
    before = row_counts()
    body = {field_name: "ß" * 200, **({"kind": "tool"} if field_name == "name" else {})}
    response = client.post(path.format(**world), body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert field_name in response.json()["error"]
    assert row_counts() == before


def test_the_key_bound_is_the_key_columns():
    from dedup.services.entities import KEY_MAX_LENGTH
    from palace.models import Entity, EntityAlias

    for model in (Entity, EntityAlias):
        assert model._meta.get_field("key").max_length == KEY_MAX_LENGTH


@pytest.mark.parametrize("charset", ["latin-1", "utf-16", "no-such-charset"])
def test_a_body_is_read_as_utf8_whatever_charset_its_header_names(world, charset):
    """JSON over a network is UTF-8 (RFC 8259): a header naming latin-1 had "caf\\xe9" stored as
    café, where the same bytes alone are refused; an unknown charset is no 500."""
    before = row_counts()
    response = api_client(world).generic(
        "POST",
        "/api/wings/ops/rooms/dev/drawers",
        b'{"content": "caf\xe9 au lait"}',
        content_type=f"application/json; charset={charset}",
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_json"
    assert row_counts() == before


# Routes that read no body: one sent is still parsed, so a malformed one is refused before the
# route acts (they deleted, reversed and cancelled with such a body).
BODYLESS = {
    "delete drawer": ("DELETE", "/api/drawers/{drawer}"),
    "take back alias": ("DELETE", "/api/entities/{entity}/aliases?alias=Kat"),
    "reverse import": ("POST", "/api/imports/{import_id}/reverse"),
    "reverse sweep": ("POST", "/api/sweeps/{run}/reverse"),
    "resume sweep": ("POST", "/api/sweeps/{run}/resume"),
    "cancel sweep job": ("POST", "/api/sweeps/{run}/cancel"),
}


@pytest.mark.parametrize("body", [b'{"bogus": NaN}', b'{"a": "x\\u0000"}', b'{"a": '])
@pytest.mark.parametrize(("method", "path"), BODYLESS.values(), ids=BODYLESS.keys())
def test_a_route_reading_no_body_refuses_a_malformed_one(world, method, path, body):
    imported = imports.import_create(source="x", format="mempalace")
    before = row_counts()
    response = api_client(world).generic(
        method,
        path.format(**world, import_id=imported.pk),
        body,
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["code"] in {"invalid", "invalid_json"}
    assert row_counts() == before


@pytest.mark.parametrize("url", ["/?q=%00", "/?q=%ff", "/audit/?actor=%ed%a0%80"])
def test_a_console_page_refused_at_the_edge_is_the_consoles_page(world, url):
    """A curator's trial: the refusal was a bare "<h1>400</h1>" with no header, no way back and
    no language (axe: html-has-lang, no main landmark)."""
    response = Client().get(url, RAW_URI=url)
    page = response.content.decode()
    assert response.status_code == 400
    assert '<html lang="en">' in page
    assert '<main id="main"' in page
    assert "<title>Bad request · Castellan</title>" in page
    assert 'href="/">Back to the review queue' in page
