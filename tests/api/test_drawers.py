"""The drawer endpoints: writes with deduplication, reads, supersession, deletion, and every way
a request can be wrong (a stable code, a message, and nothing written)."""

import uuid

import pytest

from dedup import services
from dedup.errors import NotFound
from palace.models import AuditEntry, Drawer, DrawerLink, Room, Wing

pytestmark = pytest.mark.django_db

DECISION = "We decided to use SurrealDB for storage because one engine covers documents, graph and vectors."
URL = "/api/wings/notes/rooms/entries/drawers"


def write(api, content=DECISION, url=URL, **fields):
    return api.post(url, {"content": content, **fields}, format="json")


def test_first_write_is_stored_with_its_derived_fields(api, user):
    response = write(api, kind="fact")
    assert response.status_code == 201
    body = response.json()
    assert body["created"] is True
    assert body["similar"] == []
    drawer = Drawer.objects.get(uuid=body["id"])
    assert drawer.content == DECISION
    assert body["wing"] == "notes"
    assert body["room"] == "entries"
    assert body["content_hash"] == drawer.content_hash
    assert len(drawer.content_hash) == 64
    assert body["fingerprint"] == drawer.fingerprint
    assert body["agent"] == user.username
    assert body["kind"] == "fact"
    assert body["source"] == {"via": "api", "user": user.username}
    assert body["valid_to"] is None
    assert body["is_current"] is True


def test_wings_and_rooms_are_created_on_first_use(api):
    write(api)
    assert Wing.objects.filter(name="notes").exists()
    assert Room.objects.filter(wing__name="notes", name="entries").exists()


def test_exact_copy_returns_the_existing_drawer(api):
    first = write(api).json()
    again = write(api)
    assert again.status_code == 200
    assert again.json()["id"] == first["id"]
    assert again.json()["created"] is False
    assert Drawer.objects.count() == 1


def test_variant_is_stored_and_linked_with_its_evidence(api, settings):
    first = write(api).json()
    response = write(api, DECISION.replace("storage", "storge"))
    assert response.status_code == 201
    (similar,) = response.json()["similar"]
    assert similar["drawer"] == first["id"]
    assert similar["side"] == "older"
    assert similar["kind"] == "near"
    assert similar["signals"] == {
        "same_hash": False,
        "same_fingerprint": False,
        "similarity": similar["similarity"],
        "threshold": 0.9,
    }
    assert similar["similarity"] > 0.98


def test_threshold_in_force_is_recorded(api, settings):
    settings.CASTELLAN_DEDUP_NEAR_THRESHOLD = 0.95
    write(api)
    (similar,) = write(api, DECISION.replace("storage", "storge")).json()["similar"]
    assert similar["signals"]["threshold"] == 0.95


def test_case_variant_is_normalized(api):
    write(api)
    (similar,) = write(api, DECISION.upper()).json()["similar"]
    assert similar["kind"] == "normalized"
    assert similar["signals"]["same_fingerprint"] is True


def test_near_miss_number_is_linked_not_merged(api):
    write(api, "For local development always use port 8080 for the API server.")
    response = write(api, "For local development always use port 8081 for the API server.")
    assert response.status_code == 201
    assert response.json()["similar"][0]["kind"] == "near"
    assert Drawer.objects.count() == 2


def test_at_most_five_links_strongest_first(api):
    base = "The quarterly planning meeting moved to Thursday afternoon in room"
    for n in range(7):
        write(api, f"{base} {n}{n}{n}")
    response = write(api, f"{base} 333")
    assert response.status_code == 200  # exact copy of the fourth
    response = write(api, f"{base.upper()} 333")
    similar = response.json()["similar"]
    assert len(similar) == 5
    assert similar[0]["kind"] == "normalized"
    scores = [s["similarity"] for s in similar[1:]]
    assert scores == sorted(scores, reverse=True)


def test_named_write_is_stored_beside_an_identical_unnamed_one(api):
    first = write(api).json()
    named = write(api, name="decision")
    assert named.status_code == 201
    assert named.json()["similar"][0]["drawer"] == first["id"]
    assert named.json()["similar"][0]["kind"] == "exact"


@pytest.mark.parametrize("content", ["!!!", DECISION], ids=["no-letters", "words"])
def test_an_exact_links_evidence_says_similarity_one(api, content):
    """Issue 10, item 17: an exact copy is as alike as texts get, with or without words."""
    write(api, content)
    (similar,) = write(api, content, name="copy").json()["similar"]
    assert similar["kind"] == "exact"
    assert similar["similarity"] == 1.0
    assert similar["signals"]["similarity"] == 1.0
    assert DrawerLink.objects.get().similarity == 1.0


def test_named_write_same_content_is_a_no_op_and_other_content_conflicts(api):
    first = write(api, name="context").json()
    again = write(api, name="context")
    assert again.status_code == 200
    assert again.json()["id"] == first["id"]
    conflict = write(api, "Something else entirely.", name="context")
    assert conflict.status_code == 409
    assert conflict.json()["code"] == "drawer_name_taken"
    assert Drawer.objects.count() == 1


def test_superseded_named_drawer_frees_its_name(api):
    first = write(api, name="context").json()
    api.post(f"/api/drawers/{first['id']}/supersede", {}, format="json")
    assert write(api, "The new context.", name="context").status_code == 201


def test_client_chosen_id_makes_a_write_replayable(api):
    drawer_id = str(uuid.uuid4())
    first = write(api, id=drawer_id)
    assert first.status_code == 201
    assert first.json()["id"] == drawer_id
    replay = write(api, id=drawer_id)
    assert replay.status_code == 200
    assert replay.json()["created"] is False
    assert DrawerLink.objects.count() == 0
    other_room = write(api, url="/api/wings/notes/rooms/other/drawers", id=drawer_id)
    assert other_room.status_code == 409
    assert other_room.json()["code"] == "drawer_id_taken"


def test_an_id_replayed_with_other_content_is_refused_and_keeps_both_texts_apart(api):
    """Not a replay: answering the first drawer would lose the new text without a word."""
    drawer_id = str(uuid.uuid4())
    write(api, id=drawer_id)
    other = write(api, "A different fact under the same id.", id=drawer_id)
    assert other.status_code == 409
    assert other.json()["code"] == "drawer_id_taken"
    assert other.json()["details"] == {"drawer": drawer_id}
    assert list(Drawer.objects.values_list("content", flat=True)) == [DECISION]


def test_disabled_dedup_stores_everything_and_links_nothing(api, settings):
    settings.CASTELLAN_DEDUP_ENABLED = False
    write(api)
    assert write(api).status_code == 201
    assert write(api, DECISION.upper()).json()["similar"] == []
    assert Drawer.objects.count() == 3
    assert DrawerLink.objects.count() == 0


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code"),
    [
        pytest.param({"content": "   \n\t"}, "invalid", id="blank"),
        pytest.param({"content": ""}, "invalid", id="empty"),
        pytest.param({"content": "a\x00b"}, "invalid", id="nul-byte"),
        pytest.param({"content": 42}, "invalid", id="number-not-string"),
        pytest.param({"content": ["a"]}, "invalid", id="list-not-string"),
        pytest.param({"content": None}, "invalid", id="null"),
        pytest.param({}, "invalid", id="missing"),
        pytest.param({"content": "ok text", "source": "nope"}, "invalid", id="source-not-object"),
        pytest.param({"content": "ok text", "kind": "Not A Kind!"}, "invalid", id="bad-kind"),
        pytest.param({"content": "ok text", "name": "   "}, "empty_label", id="blank-name"),
        pytest.param({"content": "ok text", "kind": "  "}, "empty_label", id="blank-kind"),
        pytest.param({"content": "ok text", "id": "not-a-uuid"}, "invalid", id="bad-id"),
    ],
)
def test_bad_drawer_input_is_refused_and_writes_nothing(api, body, code):
    response = api.post(URL, body, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == code
    assert response.json()["error"]
    assert Drawer.objects.count() == 0
    assert Wing.objects.count() == 0


def test_oversized_content_is_refused(api, settings):
    settings.CASTELLAN_MAX_CONTENT_BYTES = 100
    response = write(api, "é" * 51)  # 102 bytes, 51 characters
    assert response.status_code == 400
    assert response.json()["code"] == "content_too_large"
    assert response.json()["details"]["limit"] == 100
    assert write(api, "é" * 50).status_code == 201  # exactly the limit is fine


def test_malformed_json_is_refused(api):
    response = api.post(URL, data=b'{"content": ', content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_json"
    assert Drawer.objects.count() == 0


def test_invalid_utf8_is_refused(api):
    response = api.post(URL, data=b'{"content": "\xff\xfe"}', content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_json"
    assert Drawer.objects.count() == 0


def test_lone_surrogate_is_refused(api):
    response = api.post(URL, data=b'{"content": "\\ud800 x"}', content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert Drawer.objects.count() == 0


def test_json_body_must_be_an_object(api):
    response = api.post(URL, data=b'["content"]', content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"


def test_non_json_media_type_is_refused(api):
    response = api.post(URL, data="content=x", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"


def test_blank_room_label_is_refused(api):
    response = write(api, url="/api/wings/notes/rooms/%20%20/drawers")
    assert response.status_code == 400
    assert response.json()["code"] == "empty_label"
    assert Drawer.objects.count() == 0
    assert Wing.objects.count() == 0


def test_anonymous_requests_get_401(anonymous_api):
    response = write(anonymous_api)
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
    assert response["WWW-Authenticate"].startswith("Token")
    assert anonymous_api.get("/api/entities").status_code == 401
    assert Drawer.objects.count() == 0


def test_bad_token_gets_401(anonymous_api):
    anonymous_api.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = write(anonymous_api)
    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"


# --- reads -------------------------------------------------------------------------------------


def test_list_is_newest_first_and_paginated(api):
    ids = [write(api, f"Memory number {n} about the garden shed.").json()["id"] for n in range(5)]
    page = api.get(URL, {"page_size": 2}).json()
    assert [d["id"] for d in page["results"]] == ids[::-1][:2]
    second = api.get(page["next"]).json()
    assert [d["id"] for d in second["results"]] == ids[::-1][2:4]


def test_list_hides_superseded_unless_asked(api):
    first = write(api).json()
    write(api, "Something else that stays current.")
    api.post(f"/api/drawers/{first['id']}/supersede", {}, format="json")
    assert len(api.get(URL).json()["results"]) == 1
    assert len(api.get(URL, {"all": "true"}).json()["results"]) == 2


def test_list_of_unknown_room_is_404_and_creates_nothing(api):
    response = api.get("/api/wings/nowhere/rooms/none/drawers")
    assert response.status_code == 404
    assert response.json()["code"] == "room_not_found"
    assert Wing.objects.count() == 0


def test_wing_lists_rooms_with_counts(api):
    write(api)
    write(api, url="/api/wings/notes/rooms/archive/drawers")
    body = api.get("/api/wings/notes").json()
    assert body == {
        "name": "notes",
        "rooms": [{"name": "archive", "drawer_count": 1}, {"name": "entries", "drawer_count": 1}],
    }
    assert api.get("/api/wings/none").json()["code"] == "wing_not_found"


def test_get_drawer_including_superseded(api):
    first = write(api).json()
    second = write(api, "A replacement memory about storage engines.").json()
    api.post(f"/api/drawers/{first['id']}/supersede", {"by": second["id"]}, format="json")
    body = api.get(f"/api/drawers/{first['id']}").json()
    assert body["superseded_by"] == second["id"]
    assert body["valid_to"] is not None
    assert body["is_current"] is False


@pytest.mark.parametrize("suffix", ["", "/duplicates", "/supersede", "/mentions"])
def test_unknown_and_malformed_drawer_ids(api, suffix):
    method = api.get if suffix in ("", "/duplicates") else api.post
    unknown = method(f"/api/drawers/{uuid.uuid4()}{suffix}", {"bad": "body"}, format="json")
    assert unknown.status_code == 404
    assert unknown.json()["code"] == "drawer_not_found"
    malformed = method(f"/api/drawers/123{suffix}", {"bad": "body"}, format="json")
    assert malformed.status_code == 400
    assert malformed.json()["code"] == "invalid_id"


def test_duplicates_from_both_ends_closest_first(api):
    original = write(api).json()
    typo = write(api, DECISION.replace("storage", "storge")).json()
    shout = write(api, DECISION.upper()).json()
    body = api.get(f"/api/drawers/{original['id']}/duplicates").json()
    assert body["drawer"] == original["id"]
    assert [(s["drawer"], s["side"], s["kind"]) for s in body["similar"]] == [
        (shout["id"], "newer", "normalized"),
        (typo["id"], "newer", "near"),
    ]
    assert set(body["similar"][0]) == {
        "link",
        "drawer",
        "side",
        "kind",
        "similarity",
        "signals",
        "created_at",
    }
    from_typo = api.get(f"/api/drawers/{typo['id']}/duplicates").json()["similar"]
    assert [(s["drawer"], s["side"]) for s in from_typo] == [
        (original["id"], "older"),
        (shout["id"], "newer"),
    ]


# --- supersede and delete ----------------------------------------------------------------------


def test_supersede_is_audited_and_frees_the_text(api, user):
    first = write(api).json()
    response = api.post(f"/api/drawers/{first['id']}/supersede", {}, format="json")
    assert response.status_code == 200
    assert response.json()["valid_to"] is not None
    entry = AuditEntry.objects.get(action="drawer.supersede")
    assert entry.actor == user
    assert entry.target_id == first["id"]
    assert entry.before == {"valid_to": None, "superseded_by": None}
    # Saying the same thing again is stored: what is no longer true must not block it.
    again = write(api)
    assert again.status_code == 201
    assert again.json()["similar"] == []


def test_supersede_twice_conflicts(api):
    first = write(api).json()
    api.post(f"/api/drawers/{first['id']}/supersede", {}, format="json")
    response = api.post(f"/api/drawers/{first['id']}/supersede", {}, format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "drawer_not_current"
    assert AuditEntry.objects.filter(action="drawer.supersede").count() == 1


def test_supersede_by_unknown_or_itself(api):
    first = write(api).json()
    unknown = api.post(
        f"/api/drawers/{first['id']}/supersede", {"by": str(uuid.uuid4())}, format="json"
    )
    assert unknown.status_code == 404
    assert unknown.json()["code"] == "drawer_not_found"
    itself = api.post(f"/api/drawers/{first['id']}/supersede", {"by": first["id"]}, format="json")
    assert itself.status_code == 400
    assert Drawer.objects.get(uuid=first["id"]).valid_to is None


def test_delete_removes_links_and_is_audited(api, user):
    original = write(api).json()
    typo = write(api, DECISION.replace("storage", "storge")).json()
    response = api.delete(f"/api/drawers/{typo['id']}")
    assert response.status_code == 204
    assert not Drawer.objects.filter(uuid=typo["id"]).exists()
    assert DrawerLink.objects.count() == 0
    assert api.get(f"/api/drawers/{original['id']}/duplicates").json()["similar"] == []
    entry = AuditEntry.objects.get(action="drawer.delete")
    assert entry.before["content"] == typo["content"]
    assert entry.after is None
    assert entry.before["links"][0]["older"] == original["id"]


def test_a_deleted_drawers_id_is_not_written_again(api):
    drawer_id = str(uuid.uuid4())
    assert write(api, id=drawer_id).status_code == 201
    assert api.delete(f"/api/drawers/{drawer_id}").status_code == 204
    again = write(api, "Another memory under the deleted drawer's id.", id=drawer_id)
    assert again.status_code == 409
    assert again.json()["code"] == "drawer_id_taken"
    assert not Drawer.objects.filter(uuid=drawer_id).exists()
    assert AuditEntry.objects.filter(target_id=drawer_id).count() == 1


def test_concurrent_deletes_of_a_gone_drawer_answer_404(api):
    """The loser of a race reaches the service after the winner committed: it answers 404."""
    drawer = Drawer.objects.get(uuid=write(api).json()["id"])
    services.drawer_delete(drawer=drawer)
    with pytest.raises(NotFound) as error:
        services.drawer_delete(drawer=drawer)
    assert error.value.code == "drawer_not_found"
    assert AuditEntry.objects.filter(action="drawer.delete").count() == 1


def test_a_write_answered_by_a_drawer_deleted_meanwhile_is_a_409(api, monkeypatch):
    """A DELETE can commit between an exact copy's write and the read of its answer."""
    held = Drawer.objects.get(uuid=write(api).json()["id"])
    write_in = services.drawer_write_in

    def write_then_delete(**fields):
        result = write_in(**fields)
        services.drawer_delete(drawer=result.drawer)
        return result

    monkeypatch.setattr(services, "drawer_write_in", write_then_delete)
    response = write(api)
    assert response.status_code == 409
    assert response.json()["code"] == "drawer_deleted"
    assert response.json()["details"] == {"drawer": str(held.uuid)}


def test_an_oversized_source_is_refused_and_writes_nothing(api):
    """A source of megabytes was stored, and every read of its room returned it."""
    response = api.post(URL, {"content": "small", "source": {"a": "x" * 70_000}}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "content_too_large"
    assert response.json()["details"]["field"] == "source"
    assert Drawer.objects.count() == 0


def test_a_source_of_many_keys_is_refused_too(api):
    source = {str(n): n for n in range(20_000)}
    response = api.post(URL, {"content": "small", "source": source}, format="json")
    assert response.json()["details"]["field"] == "source"


def test_a_source_within_the_limit_is_kept(api):
    source = {"file": "notes.md", "line": 12, "text": "x" * 60_000}
    response = api.post(URL, {"content": "small", "source": source}, format="json")
    assert response.status_code == 201
    assert Drawer.objects.get().source == source


@pytest.mark.parametrize(
    "spelled",
    [
        pytest.param(lambda u: "{" + str(u) + "}", id="braces"),
        pytest.param(lambda u: f"urn:uuid:{u}", id="urn"),
        pytest.param(lambda u: u.hex, id="no-hyphens"),
    ],
)
def test_a_drawer_id_spelled_otherwise_than_the_api_writes_it_is_malformed(api, spelled):
    """A helper's trial: every drawer answered to five spellings of its id (DELETE too)."""
    drawer = write(api).json()
    response = api.delete(f"/api/drawers/{spelled(uuid.UUID(drawer['id']))}")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_id"
    assert Drawer.objects.filter(uuid=drawer["id"]).exists()


def test_a_drawer_id_in_capitals_is_the_same_id(api):
    drawer = write(api).json()
    assert api.get(f"/api/drawers/{drawer['id'].upper()}").json()["id"] == drawer["id"]


@pytest.mark.parametrize("spelling", ["{%s}", "urn:uuid:%s"])
def test_a_drawer_id_given_in_the_body_is_read_as_a_path_reads_it(api, spelling):
    """A fresh-eyes review: a drawer written under `{...}` could not be read back by that id."""
    response = write(api, id=spelling % uuid.uuid4())
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert not Drawer.objects.exists()
