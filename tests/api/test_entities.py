import uuid

import pytest

from dedup import services
from palace.models import AuditEntry, Entity, EntityLink, Mention
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def drawer(api):
    def make(content="Notes about the tools and people we met this week."):
        return api.post("/api/wings/w/rooms/r/drawers", {"content": content}, format="json").json()[
            "id"
        ]

    return make


def mention(api, drawer_id, name, kind="person", **extra):
    return api.post(
        f"/api/drawers/{drawer_id}/mentions", {"name": name, "kind": kind, **extra}, format="json"
    )


def test_new_mention_creates_an_entity_and_records_the_observation(api, drawer, user):
    response = mention(api, drawer(), "Ada Lovelace")
    assert response.status_code == 201
    body = response.json()
    assert body["created"] is True
    assert body["entity_created"] is True
    assert body["entity"]["name"] == "Ada Lovelace"
    assert body["entity"]["key"] == "ada lovelace"
    assert body["observation"] == {"name": "Ada Lovelace", "rule": "exact", "confidence": 1.0}
    assert body["provenance"] == {"via": "api", "user": user.username}


def test_same_mention_again_is_200(api, drawer):
    drawer_id = drawer()
    first = mention(api, drawer_id, "Ada").json()
    again = mention(api, drawer_id, "Ada")
    assert again.status_code == 200
    assert again.json()["created"] is False
    assert again.json()["entity"]["id"] == first["entity"]["id"]
    assert Mention.objects.count() == 1


def test_variants_from_different_drawers_converge_and_keep_their_spelling(api, drawer):
    """What the reference's extraction scenarios check, through the mentions API."""
    first = mention(api, drawer("Ada works on MemCastle."), "Ada", provenance={"document": "a.md"})
    second = mention(api, drawer("ADA works on MemCastle."), "ADA", provenance={"document": "b.md"})
    entity_id = first.json()["entity"]["id"]
    assert second.json()["entity"]["id"] == entity_id
    assert second.json()["observation"]["rule"] == "normalized"
    assert second.json()["observation"]["confidence"] == 0.98
    listed = api.get("/api/entities", {"kind": "person"}).json()["results"]
    assert [(e["name"], e["aliases"]) for e in listed] == [("Ada", ["ADA"])]
    mentions = api.get(f"/api/entities/{entity_id}/mentions").json()["results"]
    assert sorted(m["observation"]["name"] for m in mentions) == ["ADA", "Ada"]
    assert all(m["provenance"]["document"] for m in mentions)
    ada = next(m for m in mentions if m["observation"]["name"] == "ADA")
    assert ada["observation"]["rule"] == "normalized"
    assert ada["provenance"]["document"] == "b.md"


def test_vague_sighting_joins_the_typed_entity(api, drawer):
    mention(api, drawer(), "Ada", kind="person")
    response = mention(api, drawer("We thank Ada."), "Ada", kind="other")
    assert response.json()["entity"]["kind"] == "person"
    assert api.get("/api/entities", {"name": "Ada"}).json()["results"][0]["kind"] == "person"
    assert Entity.objects.count() == 1


def test_typo_converges_and_ambiguous_name_exposes_candidates(api, drawer):
    drawer_id = drawer()
    surreal = mention(api, drawer_id, "SurrealDB", "tool").json()["entity"]["id"]
    typo = mention(api, drawer_id, "SurealDB", "tool").json()
    assert typo["entity"]["id"] == surreal
    assert typo["resolution"]["rule"] == "typo"
    assert typo["resolution"]["confidence"] == pytest.approx(8 / 9)
    assert typo["observation"]["rule"] == "exact"  # this drawer's first sighting stands
    assert "SurealDB" in typo["entity"]["aliases"]
    mention(api, drawer_id, "Katarina", "tool")
    mention(api, drawer_id, "Katerino", "tool")
    katerina = mention(api, drawer_id, "Katerina", "tool").json()["entity"]
    body = api.get(f"/api/entities/{katerina['id']}/candidates").json()
    assert body["entity"] == katerina["id"]
    assert sorted(c["entity"]["name"] for c in body["candidates"]) == ["Katarina", "Katerino"]
    assert {c["side"] for c in body["candidates"]} == {"older"}
    assert set(body["candidates"][0]) == {"link", "entity", "side", "similarity", "created_at"}
    katarina = Entity.objects.get(name="Katarina")
    newer = api.get(f"/api/entities/{katarina.uuid}/candidates").json()["candidates"]
    assert [(c["entity"]["name"], c["side"]) for c in newer] == [
        ("Katerina", "newer"),
        ("Katerino", "newer"),
    ]


def test_fuzzy_off_keeps_typos_apart_but_converges_casing(api, drawer, settings):
    settings.CASTELLAN_DEDUP_ENTITY_FUZZY = False
    drawer_id = drawer()
    first = mention(api, drawer_id, "SurrealDB", "tool").json()["entity"]["id"]
    assert mention(api, drawer_id, "SurealDB", "tool").json()["entity"]["id"] != first
    assert mention(api, drawer_id, "surrealdb", "tool").json()["entity"]["id"] == first
    assert EntityLink.objects.count() == 0


def test_dedup_disabled_still_converges_names(api, drawer, settings):
    settings.CASTELLAN_DEDUP_ENABLED = False
    drawer_id = drawer()
    first = mention(api, drawer_id, "SurrealDB", "tool").json()["entity"]["id"]
    assert mention(api, drawer_id, "SurealDB", "tool").json()["entity"]["id"] == first


def test_alias_by_hand_settles_later_sightings_and_is_audited(api, drawer, user):
    drawer_id = drawer()
    entity_id = mention(api, drawer_id, "MemCastle", "tool").json()["entity"]["id"]
    response = api.post(
        f"/api/entities/{entity_id}/aliases", {"alias": "  the castle "}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["aliases"] == ["the castle"]
    assert response.json()["added"] is True
    entry = AuditEntry.objects.get(action="entity.alias_add")
    assert entry.actor == user
    assert entry.before == {"aliases": []}
    assert entry.after == {"aliases": ["the castle"]}
    converged = mention(api, drawer_id, "The Castle", "tool").json()
    assert converged["entity"]["id"] == entity_id
    assert converged["resolution"]["rule"] == "alias"
    elsewhere = mention(api, drawer("The Castle is our codename."), "The Castle", "tool").json()
    assert elsewhere["created"] is True
    assert elsewhere["observation"]["rule"] == "alias"
    assert elsewhere["observation"]["confidence"] == 0.95


@pytest.mark.parametrize("alias", ["MemCastle", "castle"])
def test_alias_equal_to_name_or_present_is_a_no_op(api, drawer, alias):
    entity_id = mention(api, drawer(), "MemCastle", "tool").json()["entity"]["id"]
    api.post(f"/api/entities/{entity_id}/aliases", {"alias": "castle"}, format="json")
    count = AuditEntry.objects.count()
    response = api.post(f"/api/entities/{entity_id}/aliases", {"alias": alias}, format="json")
    assert response.status_code == 200
    assert response.json()["added"] is False
    assert AuditEntry.objects.count() == count


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [({"alias": "  "}, 400, "empty_label"), ({"alias": 5}, 400, "invalid"), ({}, 400, "invalid")],
)
def test_bad_alias_input(api, drawer, body, status, code):
    entity_id = mention(api, drawer(), "MemCastle", "tool").json()["entity"]["id"]
    response = api.post(f"/api/entities/{entity_id}/aliases", body, format="json")
    assert (response.status_code, response.json()["code"]) == (status, code)
    assert not AuditEntry.objects.exists()


@pytest.mark.parametrize("suffix", ["", "/mentions", "/candidates", "/aliases"])
def test_unknown_and_malformed_entity_ids(api, suffix):
    method = api.post if suffix == "/aliases" else api.get
    unknown = method(f"/api/entities/{uuid.uuid4()}{suffix}", {"alias": " "}, format="json")
    assert unknown.status_code == 404
    assert unknown.json()["code"] == "entity_not_found"
    malformed = method(f"/api/entities/nope{suffix}", {"alias": " "}, format="json")
    assert malformed.status_code == 400
    assert malformed.json()["code"] == "invalid_id"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"name": " "}, "empty_label"),
        ({"name": "\u200b"}, "empty_label"),  # a zero-width space: nothing to see
        ({"name": " \ufeff\u2060 "}, "empty_label"),
        ({"name": "Ada", "kind": "Bad Kind"}, "invalid"),
        ({"name": "Ada", "kind": " "}, "empty_label"),
        ({"name": "Ada", "kind": ""}, "empty_label"),  # given blank: not `other` (README)
        ({"name": "Ada", "kind": 7}, "invalid"),
        ({"name": 4}, "invalid"),
        ({"name": "Ada", "provenance": [1]}, "invalid"),
        ({"name": "Ada", "provenance": {"a": "x" * 70_000}}, "content_too_large"),
        ({"name": "x" * 201}, "invalid"),
    ],
)
def test_bad_mention_input_writes_nothing(api, drawer, body, code):
    response = api.post(f"/api/drawers/{drawer()}/mentions", body, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == code
    assert not Entity.objects.exists()
    assert not Mention.objects.exists()


def test_entity_detail_and_search(api, drawer):
    drawer_id = drawer()
    ada = mention(api, drawer_id, "Ada Lovelace").json()["entity"]
    mention(api, drawer_id, "Grace Hopper")
    mention(api, drawer_id, "Hammer", "tool")
    detail = api.get(f"/api/entities/{ada['id']}").json()
    assert detail["mention_count"] == 1
    assert detail["kind"] == "person"
    assert [e["name"] for e in api.get("/api/entities", {"kind": "tool"}).json()["results"]] == [
        "Hammer"
    ]
    assert [e["name"] for e in api.get("/api/entities", {"name": "hop"}).json()["results"]] == [
        "Grace Hopper"
    ]


def test_a_key_of_some_wings_counts_the_mentions_in_its_wings_only(dedup_settings):
    """As its mentions list: a mention in a wing it does not reach is not told of, nor counted."""
    for wing in ("personal", "castellan"):
        written = services.drawer_write_in(wing=wing, room="r", content="Nightshade Corp called.")
        services.mention_add(drawer=written.drawer, name="Nightshade Corp", kind="org")
    entity = Entity.objects.get()
    alpha = agent_client("alpha", wings=["castellan"])
    detail = alpha.get(f"/api/entities/{entity.uuid}").json()
    listed = alpha.get("/api/entities").json()["results"]
    assert detail["mention_count"] == 1
    assert [e["mention_count"] for e in listed] == [1]
    every = agent_client("omega")
    assert every.get(f"/api/entities/{entity.uuid}").json()["mention_count"] == 2
