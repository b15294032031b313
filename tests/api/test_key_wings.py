"""A key made for some wings can find out which: `list_wings` (and `GET /api/wings`) shows them
before any drawer is written into them, and an `out_of_scope` refusal names them."""

from __future__ import annotations

import json

import pytest

from api.mcp_server import reads, writes
from api.models import ALL_WINGS, AgentKey
from dedup import services
from palace.models import Wing
from tests.api.conftest import rest_of
from tests.api.mcp_support import ctx_of

pytestmark = pytest.mark.django_db

MEMORY = "The nightly backup copies the object store to the second region at two."


def key(*wings: str) -> str:
    _, secret = AgentKey.objects.issue(agent="agent-a", wings=wings, rights=("read", "write"))
    return secret


@pytest.fixture
def alpha(dedup_settings) -> None:
    services.drawer_write_in(wing="alpha", room="ops", content=MEMORY, agent="agent-b")


def test_a_fresh_key_sees_its_wings_before_they_hold_a_drawer(alpha) -> None:
    secret = key("gamma", "alpha")
    listed = reads.list_wings(ctx_of(secret))
    assert listed == {
        "wings": [
            {"name": "alpha", "rooms": [{"name": "ops", "drawer_count": 1}]},
            {"name": "gamma", "rooms": []},
        ],
        "every_wing": False,
    }
    assert rest_of(secret).get("/api/wings").json() == listed["wings"]
    assert reads.list_rooms(ctx_of(secret), wing="gamma") == {"name": "gamma", "rooms": []}
    assert rest_of(secret).get("/api/wings/gamma").json() == {"name": "gamma", "rooms": []}
    assert not Wing.objects.filter(name="gamma").exists()  # reading makes nothing


def test_a_key_of_every_wing_sees_the_wings_there_are(alpha) -> None:
    secret = key(ALL_WINGS)
    listed = reads.list_wings(ctx_of(secret))
    assert [wing["name"] for wing in listed["wings"]] == ["alpha"]
    assert listed["every_wing"] is True
    refused = rest_of(secret).get("/api/wings/gamma")
    assert (refused.status_code, refused.json()["code"]) == (404, "wing_not_found")


def test_out_of_scope_names_the_wings_the_key_reaches(alpha) -> None:
    secret = key("gamma", "delta")
    answer = writes.add_drawer(ctx_of(secret), wing="alpha", room="ops", content=MEMORY)
    body = json.loads(answer.content[0].text)
    assert body["code"] == "out_of_scope"
    assert body["details"] == {"wings": ["delta", "gamma"]}
    assert body["error"] == "This key does not reach wing 'alpha'. It reaches: 'delta', 'gamma'."
    over_rest = rest_of(secret).post(
        "/api/wings/alpha/rooms/ops/drawers", {"content": MEMORY}, format="json"
    )
    assert (over_rest.status_code, over_rest.json()) == (403, body)


def test_a_route_of_every_wing_names_the_keys_wings_too(alpha) -> None:
    answer = rest_of(key("gamma")).get("/api/review/queue")
    assert answer.status_code == 403
    assert answer.json()["details"] == {"wings": ["gamma"]}
    assert "It reaches: 'gamma'." in answer.json()["error"]
