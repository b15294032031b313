"""A drawer is superseded only by a drawer of its own wing (409 `supersede_across_wings`
otherwise), by every path that supersedes: the REST route, MCP's tool, a Castellan file's
supersessions. Found by an agent's trial: a key of every wing superseded a drawer of wing alpha by
one of wing beta; alpha's key was then shown `superseded_by` and `current` naming a drawer it
cannot read (`drawer_not_found`), and the fact left its search. A key is never shown an id it
cannot reach; the rule is the one service's (`drawer_supersede`), which the import applies too."""

from __future__ import annotations

import json

import pytest

from api.mcp_server import writes
from api.models import AgentKey
from dedup import imports, services
from dedup.errors import Conflict
from palace.models import AuditAction, AuditEntry, Drawer
from tests.api.mcp_support import ctx_of
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db


def drawer(wing: str, content: str, room: str = "r") -> Drawer:
    return services.drawer_write_in(wing=wing, room=room, content=content).drawer


@pytest.fixture
def pair(dedup_settings) -> tuple[Drawer, Drawer]:
    return drawer("alpha", "The launch is on Monday."), drawer("beta", "The launch is on Friday.")


def supersede(client, old: Drawer, by: Drawer):
    return client.post(f"/api/drawers/{old.uuid}/supersede", {"by": str(by.uuid)}, format="json")


def test_a_supersession_across_wings_is_refused(pair):
    response = supersede(agent_client("omega"), *pair)
    assert response.status_code == 409
    assert response.json()["code"] == "supersede_across_wings"


def test_the_refused_drawer_stays_current(pair):
    old, by = pair
    supersede(agent_client("omega"), old, by)
    old.refresh_from_db()
    assert old.valid_to is None
    assert old.superseded_by_id is None
    assert not AuditEntry.objects.filter(action=AuditAction.DRAWER_SUPERSEDE).exists()


def test_the_refusal_names_both_wings(pair):
    body = supersede(agent_client("omega"), *pair).json()
    assert body["details"] == {"field": "by", "wing": "alpha", "by_wing": "beta"}


def test_a_drawer_of_another_room_of_the_wing_supersedes(dedup_settings):
    old = drawer("alpha", "The launch is on Monday.")
    by = drawer("alpha", "The launch is on Friday.", room="plans")
    assert supersede(agent_client("alpha-key", wings=["alpha"]), old, by).status_code == 200


def test_the_service_refuses_it(pair):
    old, by = pair
    with pytest.raises(Conflict) as refused:
        services.drawer_supersede(drawer=old, by=by)
    assert refused.value.code == "supersede_across_wings"


def test_over_mcp_it_is_refused(pair):
    old, by = pair
    _, secret = AgentKey.objects.issue(agent="omega", wings=["*"], rights=["read", "delete"])
    ctx = ctx_of(secret)
    answer = writes.supersede_drawer(ctx, drawer_id=str(old.uuid), by=str(by.uuid))
    assert answer.is_error
    assert json.loads(answer.content[0].text)["code"] == "supersede_across_wings"


def test_an_imported_supersession_across_wings_is_reported_and_left(tmp_path, dedup_settings):
    lines = [
        {"type": "drawer", "id": "a", "wing": "alpha", "room": "r", "content": "Monday."},
        {"type": "drawer", "id": "b", "wing": "beta", "room": "r", "content": "Friday."},
    ]
    lines[0] |= {"valid_to": "2025-01-01T00:00:00+00:00", "superseded_by": "b"}
    path = tmp_path / "file.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    tally = imports.import_run(
        imports.import_create(source=str(path), format="castellan"), path=path
    )
    assert [e["line"] for e in tally.errors] == [1]
    assert "wing 'alpha'" in tally.errors[0]["error"]
    assert Drawer.objects.get(content="Monday.").valid_to is None
