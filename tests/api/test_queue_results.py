"""The review queue answers its list under `results`, the key of the API's other lists (the
paginated lists and the search), and under `items` too, the same list, deprecated in the schema
for the clients written before."""

from __future__ import annotations

import pytest

from tests.api.conftest import api_client

pytestmark = pytest.mark.django_db


def test_the_queue_lists_under_results(world):
    body = api_client(world).get("/api/review/queue").json()
    assert world["item"] in [item["id"] for item in body["results"]]


def test_the_queue_keeps_items_the_same(world):
    body = api_client(world).get("/api/review/queue").json()
    assert body["items"] == body["results"]


def test_other_lists_use_results(world):
    """The key the queue agrees with: a paginated list's and the search's."""
    client = api_client(world)
    assert "results" in client.get("/api/review/decisions").json()
    assert "results" in client.get("/api/search?q=development").json()


def test_the_schema_deprecates_items(world):
    schema = (
        api_client(world).get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    )
    fields = schema["components"]["schemas"]["Queue"]["properties"]
    assert fields["items"].get("deprecated") is True
    assert "deprecated" not in fields["results"]
    assert "results" in schema["components"]["schemas"]["Queue"]["required"]
