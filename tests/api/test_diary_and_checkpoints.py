import uuid

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from dedup import services
from palace.models import Checkpoint, Drawer
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db

ENTRY = "Today I refactored the ingestion pipeline and the tests finally pass."


def client_as(username: str, grant=None) -> APIClient:
    user = get_user_model().objects.create_user(username)
    if grant:
        grant(user, "write_as_any_agent")
    return agent_client(user.username)


def test_diary_is_filed_in_the_wings_diary_room_as_the_caller(api, user):
    response = api.post("/api/diary", {"wing": "journal", "content": ENTRY}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert (body["wing"], body["room"], body["agent"]) == ("journal", "diary", user.username)


def test_diary_compares_only_the_same_agents_entries(dedup_settings):
    alice, bob = client_as("alice"), client_as("bob")
    first = alice.post("/api/diary", {"wing": "w", "content": ENTRY}, format="json").json()
    bobs = bob.post("/api/diary", {"wing": "w", "content": ENTRY}, format="json")
    assert bobs.status_code == 201
    assert bobs.json()["similar"] == []
    again = alice.post("/api/diary", {"wing": "w", "content": ENTRY}, format="json")
    assert again.status_code == 200
    assert again.json()["id"] == first["id"]
    assert Drawer.objects.filter(room__name="diary").count() == 2


def test_a_memory_written_into_the_diary_room_is_compared_per_agent_too(dedup_settings):
    """The room's drawers are one agent's each, as sweeps and merges take them: Bob's copy of
    Alice's entry, written through the rooms' endpoint, is Bob's, not Alice's drawer again."""
    alice, bob = client_as("alice"), client_as("bob")
    first = alice.post("/api/diary", {"wing": "w", "content": ENTRY}, format="json").json()
    bobs = bob.post("/api/wings/w/rooms/diary/drawers", {"content": ENTRY}, format="json")
    assert bobs.status_code == 201
    assert bobs.json()["id"] != first["id"]
    assert bobs.json()["agent"] == "bob"
    alices = alice.post("/api/wings/w/rooms/diary/drawers", {"content": ENTRY}, format="json")
    assert alices.status_code == 200
    assert alices.json()["id"] == first["id"]


def test_writing_as_another_agent_needs_the_permission(dedup_settings, grant):
    plain = client_as("plain")
    refused = plain.post(
        "/api/diary", {"wing": "w", "content": ENTRY, "agent": "someone"}, format="json"
    )
    assert refused.status_code == 403
    assert refused.json()["code"] == "permission_denied"
    assert Drawer.objects.count() == 0
    trusted = client_as("orchestrator", grant)
    allowed = trusted.post(
        "/api/diary", {"wing": "w", "content": ENTRY, "agent": "someone"}, format="json"
    )
    assert allowed.status_code == 201
    assert allowed.json()["agent"] == "someone"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"wing": "w"}, "invalid"),
        ({"wing": "w", "content": "  "}, "invalid"),
        ({"wing": " ", "content": ENTRY}, "empty_label"),
        ({"wing": 3, "content": ENTRY}, "invalid"),
    ],
)
def test_bad_diary_input(api, body, code):
    response = api.post("/api/diary", body, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == code
    assert Drawer.objects.count() == 0


def item(content, **extra):
    return {"content": content, "destination": "general", **extra}


def test_checkpoint_counts_and_files_by_destination(api, user):
    body = {
        "id": "job-1",
        "items": [
            item("We decided to use SurrealDB for storage because one engine covers it all."),
            item("We decided to use SurrealDB for storage because one engine covers it all."),
            item("We decided to use SurrealDB for storge because one engine covers it all."),
            {"content": "Prefers dark mode in every editor.", "destination": "preference"},
            {"content": "Castellan ships in March.", "destination": "project", "wing": "castellan"},
            {"content": "Wrote the checkpoint code today.", "destination": "diary"},
        ],
    }
    response = api.post("/api/checkpoints", body, format="json")
    assert response.status_code == 201
    result = response.json()
    assert (result["items"], result["stored"], result["duplicates"], result["similar"]) == (
        6,
        5,
        1,
        1,
    )
    assert result["replayed"] is False
    places = [(d["wing"], d["room"], d["created"]) for d in result["drawers"]]
    assert places == [
        ("general", "entries", True),
        ("general", "entries", False),
        ("general", "entries", True),
        ("preferences", "entries", True),
        ("castellan", "projects", True),  # in a wing named, the destination's room
        ("diary", "diary", True),
    ]
    assert result["drawers"][1]["drawer"] == result["drawers"][0]["drawer"]
    diary = Drawer.objects.get(room__name="diary")
    assert diary.agent == user.username
    assert diary.source["checkpoint"] == "job-1"


def test_checkpoint_replay_stores_nothing_and_returns_the_same_result(api):
    body = {"id": "job-2", "items": [item("A memory worth keeping for later.")]}
    first = api.post("/api/checkpoints", body, format="json").json()
    replay = api.post("/api/checkpoints", body, format="json")
    assert replay.status_code == 200
    assert {**replay.json(), "replayed": False} == first
    assert Drawer.objects.count() == 1
    assert Checkpoint.objects.count() == 1


def test_checkpoint_id_reused_with_other_items_conflicts(api):
    api.post("/api/checkpoints", {"id": "job-3", "items": [item("First.")]}, format="json")
    response = api.post(
        "/api/checkpoints", {"id": "job-3", "items": [item("Second.")]}, format="json"
    )
    assert response.status_code == 409
    assert response.json()["code"] == "checkpoint_id_taken"
    assert Drawer.objects.count() == 1


def test_checkpoint_with_a_failing_item_writes_nothing(api):
    api.post(
        "/api/wings/general/rooms/entries/drawers",
        {"content": "first", "name": "context"},
        format="json",
    )
    body = {
        "id": "job-4",
        "items": [item("A fine memory."), item("second", name="context")],
    }
    response = api.post("/api/checkpoints", body, format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "drawer_name_taken"
    assert Drawer.objects.count() == 1
    assert not Checkpoint.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"items": [item("x")]},
        {"id": "j", "items": []},
        {"id": "j", "items": "nope"},
        {"id": "j", "items": [{"content": "x", "destination": "elsewhere"}]},
        {"id": "j", "items": [{"destination": "general"}]},
        {"id": "j", "items": [item("x"), item(" ")]},
        {"id": 7, "items": [item("x")]},
    ],
    ids=[
        "no-id",
        "no-items",
        "items-not-list",
        "bad-destination",
        "no-content",
        "blank-item",
        "id-number",
    ],
)
def test_bad_checkpoint_input_writes_nothing(api, body):
    response = api.post("/api/checkpoints", body, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert Drawer.objects.count() == 0
    assert not Checkpoint.objects.exists()


def test_checkpoint_diary_item_as_another_agent_needs_permission(api):
    body = {"id": "j", "items": [{"content": "x y z", "destination": "diary", "agent": "other"}]}
    response = api.post("/api/checkpoints", body, format="json")
    assert response.status_code == 403
    assert Drawer.objects.count() == 0


def test_a_checkpoint_id_is_the_callers_own(dedup_settings):
    """Two agents that both choose "session-1" write a checkpoint each: neither is refused
    (`checkpoint_id_taken`) nor replays the other's result, and each replays its own."""
    alice, bob = client_as("alice"), client_as("bob")
    alices = {"id": "session-1", "items": [item("Alice's memory of the deploy on Friday.")]}
    bobs = {"id": "session-1", "items": [item("Bob's note about the database migration.")]}
    first = alice.post("/api/checkpoints", alices, format="json")
    second = bob.post("/api/checkpoints", bobs, format="json")
    assert (first.status_code, second.status_code) == (201, 201)
    assert first.json()["drawers"][0]["drawer"] != second.json()["drawers"][0]["drawer"]
    again = bob.post("/api/checkpoints", bobs, format="json")
    assert (again.status_code, again.json()["replayed"]) == (200, True)
    assert again.json()["drawers"] == second.json()["drawers"]
    assert Checkpoint.objects.filter(key="session-1").count() == 2


def test_a_checkpoint_written_before_ids_were_the_callers_still_replays(dedup_settings):
    """Written before (its drawers' ids from the checkpoint's id alone, as they were), it replays
    for its user by its row, and no checkpoint now, of a user or of no one, meets its drawers."""
    old = services.checkpoint_payload_hash([])  # a stand-in row, as 0027 left them
    alice = get_user_model().objects.create_user("alice")
    written = services.drawer_write_in(
        wing="general",
        room="entries",
        content="Alice's memory from before.",
        drawer_id=uuid.uuid5(services.CHECKPOINT_NAMESPACE, "legacy\x1f0"),
    )
    result = {"id": "legacy", "items": 1, "drawers": [{"drawer": str(written.drawer.uuid)}]}
    Checkpoint.objects.create(key="legacy", payload_hash=old, result=result, created_by=alice)
    replay, replayed = services.checkpoint_write(key="legacy", items=[], actor=alice)
    assert replayed is True
    assert replay == {**result, "drawers": [{**result["drawers"][0], "present": True}]}
    other = [
        services.CheckpointItem(
            content="No one's memory.", destination=services.Destination.GENERAL, agent=""
        )
    ]
    _, replayed = services.checkpoint_write(key="legacy", items=other)  # no drawer_id_taken
    assert replayed is False


def test_a_checkpoint_carries_at_most_one_drawers_content(api, settings):
    """One transaction holds the items' rooms until it commits: 1,000 items of 12 KB held one
    for six minutes. Together they may carry what one drawer may."""
    settings.CASTELLAN_MAX_CONTENT_BYTES = 1000
    items = [item(f"{n} " + "x" * 398) for n in range(3)]  # 1,200 bytes together
    response = api.post("/api/checkpoints", {"id": "big", "items": items}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "content_too_large"
    assert response.json()["details"] == {"field": "items", "limit": 1000, "size": 1200}
    assert Drawer.objects.count() == 0
    assert not Checkpoint.objects.exists()


def test_a_checkpoint_at_the_limit_is_written(api, settings):
    settings.CASTELLAN_MAX_CONTENT_BYTES = 1000
    items = [item(f"{n} " + "x" * 498) for n in range(2)]  # 1,000 bytes together
    response = api.post("/api/checkpoints", {"id": "fits", "items": items}, format="json")
    assert response.status_code == 201
