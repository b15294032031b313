"""An agent key whose user is a person's login (a curator's, a staff member's), made before the
admin and `agent_key create` were held to agents (`api.models.refuse_a_person`), is refused for
everything with 403 `key_not_for_agent`, on REST and MCP alike, and nothing is written; an agent
key of an agent keeps working, an agent granted the decide permission deciding too."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from api.mcp_server import reads, writes
from api.mcp_server.server import key_refusal
from api.models import ALL_WINGS, RIGHTS, AgentKey
from palace.models import Drawer, Entity
from tests.api.conftest import rest_of, row_counts
from tests.api.mcp_support import ctx_of, refusal

pytestmark = pytest.mark.django_db

MEMORY = "The nightly backup copies the object store to the second region at two."


@pytest.fixture
def person_key(world, django_user_model) -> tuple[AgentKey, str]:
    """A key of every wing and right, moved onto the curator's login as the admin once made one
    (an `update`, which no form or command checks)."""
    key, secret = AgentKey.objects.issue(agent="scout", wings=[ALL_WINGS], rights=list(RIGHTS))
    AgentKey.objects.filter(pk=key.pk).update(user=world["user"])
    return key, secret


def refused_for_a_person(response) -> dict:
    assert response.status_code == 403, response.content
    return response.json()


@pytest.mark.parametrize(
    ("method", "url", "data"),
    [
        ("get", lambda w: "/api/wings", None),
        ("get", lambda w: f"/api/drawers/{w['drawer']}", None),
        ("get", lambda w: "/api/search?q=development", None),
        ("get", lambda w: "/api/review/queue", None),
        ("post", lambda w: "/api/wings/ops/rooms/dev/drawers", {"content": MEMORY}),
        (
            "post",
            lambda w: f"/api/drawers/{w['drawer']}/mentions",
            {"name": "Grace Hopper", "kind": "person"},
        ),
        ("post", lambda w: f"/api/review/items/{w['item']}/decisions", {"action": "dismiss"}),
    ],
    ids=["wings", "drawer", "search", "queue", "drawer write", "mention", "decide"],
)
def test_a_key_made_for_a_person_s_login_is_refused_for_everything(
    world, person_key, method, url, data
):
    before = row_counts()
    response = getattr(rest_of(person_key[1]), method)(url(world), data, format="json")
    assert refused_for_a_person(response)["code"] == "key_not_for_agent"
    assert row_counts() == before


def test_the_refusal_tells_the_holder_what_to_ask_for_and_the_admin_how(world, person_key):
    key, secret = person_key
    message = refused_for_a_person(rest_of(secret).get("/api/wings"))["error"]
    assert "ask an admin for a key made for an agent" in message
    assert f"manage.py agent_key revoke {key.prefix}" in message
    assert "manage.py agent_key create AGENT" in message


def test_the_refusal_names_no_one(world, person_key):
    """The holder learns that the key is a person's, not whose."""
    assert "cora" not in refused_for_a_person(rest_of(person_key[1]).get("/api/wings"))["error"]


def test_the_key_s_use_is_not_recorded(world, person_key):
    rest_of(person_key[1]).get("/api/wings")
    assert AgentKey.objects.get(pk=person_key[0].pk).last_used_at is None


def test_an_mcp_tool_refuses_it_alike(world, person_key):
    before = row_counts()
    answer = writes.add_drawer(ctx_of(person_key[1]), wing="ops", room="dev", content=MEMORY)
    assert refusal(answer)["code"] == "key_not_for_agent"
    assert row_counts() == before


def test_an_mcp_read_refuses_it_alike(world, person_key):
    answer = reads.list_wings(ctx_of(person_key[1]))
    assert refusal(answer)["code"] == "key_not_for_agent"


def test_mcp_over_http_refuses_it_before_any_message(world, person_key):
    status, answer = key_refusal({"authorization": f"Bearer {person_key[1]}"})
    assert status == 403
    assert answer["code"] == "key_not_for_agent"


def test_an_agent_s_key_still_writes(world):
    _, secret = AgentKey.objects.issue(agent="scout", wings=[ALL_WINGS], rights=list(RIGHTS))
    response = rest_of(secret).post(
        "/api/wings/ops/rooms/dev/drawers", {"content": MEMORY}, format="json"
    )
    assert response.status_code == 201, response.content
    assert Drawer.objects.get(uuid=response.json()["id"]).agent == "scout"


def test_an_agent_s_key_still_writes_entities(world):
    _, secret = AgentKey.objects.issue(agent="scout", wings=[ALL_WINGS], rights=list(RIGHTS))
    response = rest_of(secret).post(
        f"/api/drawers/{world['drawer']}/mentions",
        {"name": "Grace Hopper", "kind": "person"},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert Entity.objects.filter(name="Grace Hopper").exists()


def test_an_agent_granted_the_decide_permission_decides(world):
    key, secret = AgentKey.objects.issue(agent="scout", wings=[ALL_WINGS], rights=list(RIGHTS))
    key.user.user_permissions.add(Permission.objects.get(codename="decide"))
    response = rest_of(secret).post(
        f"/api/review/items/{world['item']}/decisions", {"action": "dismiss"}, format="json"
    )
    assert response.status_code in (200, 201), response.content
