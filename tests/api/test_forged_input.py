"""Values well formed where they are first read and forged inside: cursors that decode to what
the app never wrote, ids of thousands of digits, documents nested past any bound, URLs urllib
refuses. Each is refused as any bad input is (a 4xx, or a form's error) and changes nothing;
none answers 500. Random fuzzing (schemathesis) seldom reaches them: a random cursor does not
decode at all. Every cursor is sealed (`dedup.cursors`): these are sealed with the app's key, as
if it had leaked, so what they hold is read and refused by the checks behind the seal."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest
from django.test import Client

from dedup import services as write
from dedup.cursors import list_identity, sealed
from dedup.search import query_groups, search_identity
from palace.models import AuditEntry, DrawerLink
from review.selectors.filters import QueueFilters
from review.selectors.queue import queue_identity
from tests.api.conftest import api_client, row_counts

pytestmark = pytest.mark.django_db

HUGE = "9" * 4401  # past the 4,300 digits Python's int() reads from text
DEEP = "[" * 1000 + "]" * 1000


def cursor(value: str, bound: bytes) -> str:
    """A cursor as the app writes them (base64url without padding) of any text, sealed for its
    list (`bound`): sealed for another, it would not open, and the test would not reach what it
    holds."""
    text = base64.urlsafe_b64encode(value.encode()).decode().rstrip("=")
    return quote(sealed(text, bound=bound))


def list_cursor(value: str, path: str) -> str:
    """A cursor as DRF writes a list's (base64 with padding) of any text, sealed for the list at
    `path` (no filter): written otherwise, DRF cannot decode it at all."""
    bound = list_identity("list", path=path, filters={})
    return quote(sealed(base64.b64encode(value.encode()).decode(), bound=bound))


def queue_cursor(value: str, order: str) -> str:
    return cursor(value, queue_identity(QueueFilters(order=order)))


SEARCH_BOUND = search_identity(query_groups("local development"), wing=None, room=None, agent=None)


LIST_CURSORS = {
    "a date": "p=2026-12-05",
    "a word": "p=abc",
    "beyond a bigint": "p=99999999999999999999999",
    "empty": "p=",
    "a fraction": "o=3&p=1.5",
    "4,401 digits": f"p={HUGE}",
    # Each of these DRF read as some page: the first one, or the last before its cutoff.
    "no token": '"x"',
    "an unknown token": "q=1&p=5",
    "an offset past the cutoff": "o=99999999999999999999999999999&p=5",
    "a direction of 2": "r=2&p=5",
    "a token twice": "p=5&p=6",
}


@pytest.mark.parametrize("position", LIST_CURSORS.values(), ids=LIST_CURSORS.keys())
@pytest.mark.parametrize("path", ["/api/entities", "/api/sweeps/{run}/proposals"])
def test_a_forged_list_cursor_is_refused_as_a_malformed_one(world, path, position):
    """Positions that are no id answered 500 (DRF filters by whatever a cursor holds)."""
    before = row_counts()
    path = path.format(**world)
    response = api_client(world).get(f"{path}?cursor={list_cursor(position, path)}")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_cursor"
    assert row_counts() == before


@pytest.mark.parametrize("raw", ["garbage", "===="])
def test_a_list_cursor_that_does_not_decode_is_the_same_400(world, raw):
    response = api_client(world).get(f"/api/entities?cursor={raw}")
    assert response.status_code == 400  # DRF's own answer was a 404
    assert response.json()["code"] == "invalid_cursor"


def test_an_empty_list_cursor_is_the_first_page(world):
    assert api_client(world).get("/api/entities?cursor=").status_code == 200


def test_a_cursor_the_api_made_still_pages(world):
    for name in ("Zebra Tool", "Yak Tool"):
        write.entity_resolve(name=name, kind="tool")
    client = api_client(world)
    first = client.get("/api/entities?page_size=1").json()
    second = client.get(first["next"])
    assert second.status_code == 200
    assert second.json()["results"][0]["id"] != first["results"][0]["id"]


QUEUE_CURSORS = {
    "infinite pk": ("similarity", '[0.5,"d",Infinity]'),
    "infinite key": ("similarity", '[1e999,"d",1]'),
    "a key of 310 digits": ("similarity", f'[{"9" * 310},"d",1]'),
    "pk beyond a bigint": ("similarity", '[0.5,"d",18446744073709551616]'),
    "pk a boolean": ("similarity", '[0.5,"d",true]'),
    "pk zero": ("similarity", '[0.5,"d",0]'),
    "unknown kind": ("similarity", '[0.5,"x",1]'),
    "a list for a kind": ("similarity", '[0.5,["d"],1]'),
    "nested deep": ("similarity", DEEP),
    "three fields short": ("similarity", '[0.5,"d"]'),
    "an hour past year 9999": ("newest", '["9999-12-31T23:59:59-01:00","d",1]'),
    "a time without offset": ("newest", '["2026-01-01T00:00:00","d",1]'),
    "a number for a time": ("newest", '[1,"d",1]'),
}


@pytest.mark.parametrize(("order", "value"), QUEUE_CURSORS.values(), ids=QUEUE_CURSORS.keys())
def test_a_forged_queue_cursor_is_refused(world, order, value):
    before = row_counts()
    response = api_client(world).get(
        f"/api/review/queue?order={order}&cursor={queue_cursor(value, order)}"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_cursor"
    console = Client(raise_request_exception=False)
    console.force_login(world["user"])
    assert console.get(f"/?order={order}&cursor={queue_cursor(value, order)}").status_code == 400
    assert row_counts() == before


def test_queue_cursors_of_the_app_s_shape_still_page(world):
    """Any instant ISO allows is read, in UTC: PostgreSQL refused an offset beyond 15:59."""
    link = DrawerLink.objects.get(pk=int(world["item"][1:]))
    shapes = {
        "similarity": f'[{link.similarity},"d",{link.pk}]',
        "newest": f'["{link.created_at.isoformat()}","d",{link.pk}]',
        "oldest": '["2026-01-01T00:00:00+23:59","d",1]',
    }
    client = api_client(world)
    for order, value in shapes.items():
        response = client.get(
            f"/api/review/queue?order={order}&cursor={queue_cursor(value, order)}"
        )
        assert response.status_code == 200, order


SEARCH_CURSORS = {
    "pk beyond a bigint": "[1,18446744073709551616]",
    "matched negative": "[-1,1]",
    "nested deep": DEEP,
    "a fraction": "[1,1.5]",
}


@pytest.mark.parametrize("value", SEARCH_CURSORS.values(), ids=SEARCH_CURSORS.keys())
def test_a_forged_search_cursor_is_refused(world, value):
    forged = cursor(value, SEARCH_BOUND)
    response = api_client(world).get(f"/api/search?q=local+development&cursor={forged}")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_cursor"


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("/api/entities?page_size={huge}", "invalid"),
        ("/api/review/queue?run={huge}", "invalid_id"),  # a sweep's id, malformed
    ],
)
def test_a_number_of_thousands_of_digits_in_a_query_is_refused(world, url, code):
    response = api_client(world).get(url.format(huge=HUGE))
    assert response.status_code == 400
    assert response.json()["code"] == code


@pytest.mark.parametrize("keyword", ["Token", "Bearer"])
def test_a_key_holding_a_nul_is_refused(world, keyword):
    """PostgreSQL refused to look it up (a 500) where a server lets a NUL through a header."""
    client = Client(HTTP_AUTHORIZATION=f"{keyword} ab\x00cd", raise_request_exception=False)
    response = client.get("/api/wings")
    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"


# --- the console -------------------------------------------------------------------------------


@pytest.fixture
def console(world) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(world["user"])
    return client


@pytest.mark.parametrize(
    "decision",
    ["-1", "abc", "12a", "18446744073709551616", HUGE],
    ids=["negative", "a word", "digits then a letter", "beyond a bigint", "4,401 digits"],
)
def test_undo_of_a_decision_the_form_cannot_name_undoes_nothing(world, console, decision):
    """It undid the curator's last decision: a malformed number read as none given."""
    before = row_counts()
    response = console.post("/undo", {"decision": decision}, follow=True)
    assert response.status_code == 200
    assert "not a decision&#x27;s number" in response.content.decode()
    assert row_counts() == before
    assert not AuditEntry.objects.filter(action="review.revert").exists()


def test_undo_with_no_decision_named_undoes_nothing(world, console):
    """Not "your last decision": an undo does only what an offer on screen named."""
    console.post("/undo", {"decision": ""})
    assert not AuditEntry.objects.filter(action="review.revert").exists()


def test_a_decision_whose_queue_filter_is_forged_is_made_and_answers(world, console):
    """The decision was saved, then the next item's filter (`query`) answered 500."""
    link_id = int(world["item"][1:])
    response = console.post(
        f"/items/{world['item']}/decide", {"action": "dismiss", "query": f"run={HUGE}"}
    )
    assert response.status_code == 302
    assert DrawerLink.objects.get(pk=link_id).status == DrawerLink.Status.DISMISSED


@pytest.mark.parametrize(
    ("path", "form"),
    [
        ("/clusters/{item}/decide", {"links": HUGE}),
        ("/bulk", {"all_matching": "1", "filter": f"run={HUGE}", "action": "dismiss"}),
    ],
)
def test_console_forms_with_thousands_of_digits_change_nothing(world, console, path, form):
    before = row_counts()
    response = console.post(path.format(**world), form)
    assert response.status_code < 500
    assert row_counts() == before


def test_an_htmx_request_from_a_url_urllib_refuses_goes_to_the_login(world):
    response = Client(raise_request_exception=False).get(
        "/", HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://["
    )
    assert response.status_code == 200
    assert response["HX-Redirect"].startswith("/accounts/login/")


def test_a_decision_from_a_url_urllib_refuses_offers_its_undo(world, console):
    response = console.post(
        f"/items/{world['item']}/decide",
        {"action": "dismiss"},
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL="http://[",
    )
    assert response.status_code == 200


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_a_username_past_its_length_is_a_form_error(world, path):
    """Refused before authentication: django-axes's record of the failure (255 characters at
    most) answered 500 on PostgreSQL."""
    response = Client(raise_request_exception=False).post(
        path, {"username": "u" * 256, "password": "wrong"}
    )
    assert response.status_code == 200
    assert "at most 150 characters" in response.content.decode()


# --- imports -----------------------------------------------------------------------------------


def test_import_records_past_any_bound_are_malformed_not_a_500(world, api):
    good = {"id": "1", "document": BASE_TEXT, "metadata": {"wing": "ops"}}
    lines = [
        json.dumps(good),
        DEEP,
        '{"id": ' + HUGE + ', "document": "x", "metadata": {"wing": "ops"}}',
        '{"id": "3", "document": "x", "metadata": {"wing": "no\\u0000tes"}}',
        '{"id": "4", "document": "x", "metadata": {"wing": "\\ud800"}}',
    ]
    response = api.post(
        "/api/imports", {"format": "mempalace", "data": "\n".join(lines)}, format="json"
    )
    assert response.status_code == 202
    detail = api.get(f"/api/imports/{response.json()['id']}").json()
    assert detail["summary"]["created"] == 1
    assert [m["line"] for m in detail["malformed"]] == [2, 3, 4, 5]


BASE_TEXT = "Rotate the API tokens of departed agents within one working day."
