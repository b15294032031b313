"""An import's answer lists its first drawers and links and counts them all; every one is paged
at `/api/imports/{id}/drawers` and `/links`, so an import of 100,000 records answers a poll in
a few rows."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from api.serializers import imports as import_serializers
from palace.models import Import
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db

WORDS = "amber basil cedar delta ember fjord glade heron iris juniper kestrel lotus".split()


def records(count: int) -> str:
    """`count` facts, each followed by a one-letter variant of itself (which links to it)."""
    lines = []
    for n in range(count):
        words = " ".join(WORDS[(n * 7 + k * 5) % len(WORDS)] + str(n * 31 + k) for k in range(6))
        fact = f"The depot ships orders to {words}."
        lines.append({"id": f"fact-{n}", "text": fact})
        lines.append({"id": f"variant-{n}", "text": fact.replace("orders", "ordres")})
    return "\n".join(json.dumps(line) for line in lines)


def import_of(api, count: int) -> dict:
    body = {
        "format": "jsonl",
        "data": records(count),
        "wing": "ops",
        "mapping": {"content": "text"},
    }
    response = api.post("/api/imports", body, format="json")
    assert response.status_code == 202
    return api.get(f"/api/imports/{response.json()['id']}").json()


def every_page(api, url: str) -> list[dict]:
    found, next_url = [], f"{url}?page_size=4"
    while next_url:
        page = api.get(next_url).json()
        found.extend(page["results"])
        next_url = page["next"]
    return found


@pytest.fixture
def listed(monkeypatch):
    monkeypatch.setattr(import_serializers, "LISTED", 3)
    return 3


def test_the_answer_lists_the_first_and_counts_all(api, listed):
    detail = import_of(api, 5)
    assert detail["summary"]["created"] == 10
    assert detail["drawers_count"] == 10
    assert detail["links_count"] == 5
    assert len(detail["drawers"]) == listed
    assert len(detail["links"]) == listed


def test_every_drawer_is_paged_oldest_first(api, listed):
    detail = import_of(api, 5)
    drawers = every_page(api, f"/api/imports/{detail['id']}/drawers")
    ids = [drawer["id"] for drawer in drawers]
    assert len(ids) == 10
    assert len(set(ids)) == 10
    assert ids[:listed] == detail["drawers"]
    assert {drawer["wing"] for drawer in drawers} == {"ops"}
    stored = Import.objects.get(pk=detail["id"]).drawers.order_by("id").values_list("uuid")
    assert ids == [str(uuid) for (uuid,) in stored]


def test_every_link_is_paged_with_its_ends(api, listed):
    detail = import_of(api, 5)
    links = every_page(api, f"/api/imports/{detail['id']}/links")
    assert len(links) == 5
    assert [[link["newer"], link["older"]] for link in links][:listed] == detail["links"]
    assert {link["kind"] for link in links} == {"near"}
    assert {link["status"] for link in links} == {"open"}
    drawers = set(detail["drawers"]) | {
        d["id"] for d in every_page(api, f"/api/imports/{detail['id']}/drawers")
    }
    assert {link["newer"] for link in links} <= drawers


@pytest.mark.parametrize("part", ["", "/drawers", "/links"])
def test_the_queries_do_not_grow_with_the_import(api, part):
    small, large = import_of(api, 2), import_of(api, 30)
    counts = []
    for detail in (small, large):
        with CaptureQueriesContext(connection) as queries:
            assert api.get(f"/api/imports/{detail['id']}{part}").status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]


@pytest.mark.parametrize("part", ["/drawers", "/links"])
def test_a_key_that_does_not_reach_the_wing_finds_no_import(api, user, part):
    detail = import_of(api, 2)
    other = agent_client(user.username, wings=["elsewhere"])
    response = other.get(f"/api/imports/{detail['id']}{part}")
    assert response.status_code == 404
    assert response.json()["code"] == "import_not_found"


@pytest.mark.parametrize("part", ["/drawers", "/links"])
def test_an_unknown_import_or_a_forged_cursor_is_refused(api, part):
    assert api.get(f"/api/imports/999{part}").json()["code"] == "import_not_found"
    detail = import_of(api, 2)
    response = api.get(f"/api/imports/{detail['id']}{part}?cursor=bm9wZQ")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_cursor"
