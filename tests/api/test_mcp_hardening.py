"""The MCP tools held to the REST API's edge: the same write throttle (one budget per key across
both interfaces)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from api.mcp_server import reads, writes
from api.models import ALL_WINGS, RIGHTS, AgentKey
from dedup import services
from palace.models import Drawer

pytestmark = pytest.mark.django_db

MEMORY = "The nightly backup copies the object store to the second region at two."
URL = "/api/wings/alpha/rooms/ops/drawers"


@pytest.fixture
def secret(dedup_settings) -> str:
    _, secret = AgentKey.objects.issue(agent="agent-a", wings=(ALL_WINGS,), rights=RIGHTS)
    return secret


def ctx_of(secret: str) -> Any:
    return SimpleNamespace(headers={"authorization": f"Bearer {secret}"})


def rest_of(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def refusal(answer: Any) -> dict[str, Any]:
    assert getattr(answer, "is_error", False), answer
    body = json.loads(answer.content[0].text)
    assert body == answer.structured_content
    return body


@pytest.fixture
def write_rate(settings):
    cache.clear()
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"writes": "3/min"},
    }
    yield
    cache.clear()


def rest_write(secret: str, n: int) -> int:
    answer = rest_of(secret).post(URL, {"content": f"{MEMORY} {n}"}, format="json")
    return answer.status_code


# Throttling -------------------------------------------------------------------------------------


def test_a_key_throttled_over_rest_is_throttled_over_mcp(secret, write_rate) -> None:
    assert [rest_write(secret, n) for n in range(4)] == [201, 201, 201, 429]
    answer = writes.add_drawer(ctx_of(secret), wing="alpha", room="ops", content=MEMORY)
    body = refusal(answer)
    assert body["code"] == "throttled"
    assert 0 < body["details"]["retry_after"] <= 60
    assert Drawer.objects.count() == 3


def test_mcp_writes_spend_the_same_budget_as_rest(secret, write_rate) -> None:
    for n in range(3):
        writes.add_drawer(ctx_of(secret), wing="alpha", room="ops", content=f"{MEMORY} {n}")
    assert rest_write(secret, 3) == 429


def existing_drawer() -> str:
    result = services.drawer_write_in(
        wing="alpha", room="ops", content=MEMORY, agent="agent-a", source={}
    )
    return str(result.drawer.uuid)


WRITE_CALLS = {
    "add_drawer": lambda ctx, _: writes.add_drawer(ctx, wing="alpha", room="r", content="x y"),
    "check_duplicate": lambda ctx, _: writes.check_duplicate(
        ctx, wing="alpha", room="r", content="x y"
    ),
    "write_diary": lambda ctx, _: writes.write_diary(ctx, wing="alpha", content="x y"),
    "write_checkpoint": lambda ctx, _: writes.write_checkpoint(
        ctx, id="c1", items=[{"content": "x y", "destination": "project"}]
    ),
    "record_mention": lambda ctx, drawer: writes.record_mention(ctx, drawer_id=drawer, name="X"),
    "supersede_drawer": lambda ctx, drawer: writes.supersede_drawer(ctx, drawer_id=drawer),
}


@pytest.mark.parametrize("name", sorted(WRITE_CALLS))
def test_every_write_tool_is_throttled(secret, write_rate, name) -> None:
    drawer = existing_drawer()
    for n in range(3):
        rest_write(secret, n)
    answer = WRITE_CALLS[name](ctx_of(secret), drawer)
    assert refusal(answer)["code"] == "throttled"


def test_reads_are_not_throttled(secret, write_rate) -> None:
    for n in range(4):
        rest_write(secret, n)
    assert [wing["name"] for wing in reads.list_wings(ctx_of(secret))["wings"]] == ["alpha"]
