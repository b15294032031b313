"""Recall: `GET /api/search` finds current drawers by full-text search, ranked, within the key's
wings, a page at a time; a query with a typo still finds what the write path's candidate rules
would."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.conftest import agent_client

pytestmark = pytest.mark.django_db

DEPLOY = "The deploy script must run database migrations before restarting the web workers."
BACKUP = "Nightly backups of the billing database are kept for thirty days in cold storage."
LUNCH = "The team lunch moved to Thursdays because the office kitchen is being renovated."


def write(api, content, wing="ops", room="runbooks", **fields):
    response = api.post(
        f"/api/wings/{wing}/rooms/{room}/drawers", {"content": content, **fields}, format="json"
    )
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def search(api, **params):
    return api.get("/api/search", params)


def found_ids(response):
    assert response.status_code == 200, response.json()
    return [hit["drawer"]["id"] for hit in response.json()["results"]]


def test_a_query_finds_the_drawer_holding_its_words(api):
    deploy = write(api, DEPLOY)
    write(api, BACKUP)
    write(api, LUNCH, room="social")
    assert found_ids(search(api, q="migrations deploy")) == [deploy]


def test_a_query_with_a_typo_still_finds_the_drawer(api):
    deploy = write(api, DEPLOY)
    write(api, LUNCH)
    assert found_ids(search(api, q="deploy databse migrations")) == [deploy]


def test_results_are_ranked_by_the_word_groups_they_hold(api):
    # The query's groups: [migrations, database] and [restarting, workers].
    partly = write(api, "Restarting the workers clears their caches.")
    fully = write(api, DEPLOY)
    newest_partly = write(api, "Database migrations are reviewed by two people.")
    write(api, LUNCH)
    body = search(api, q="database migrations restarting workers").json()
    assert body["groups"] == [["migrations", "database"], ["restarting", "workers"]]
    assert [hit["drawer"]["id"] for hit in body["results"]] == [fully, newest_partly, partly]
    assert [hit["matched"] for hit in body["results"]] == [2, 1, 1]


def test_a_hit_shows_the_drawer_and_the_query_words(api):
    deploy = write(api, DEPLOY, kind="fact")
    body = search(api, q="Deploy migrations").json()
    [hit] = body["results"]
    assert hit["drawer"]["id"] == deploy
    assert hit["drawer"]["wing"] == "ops"
    assert hit["drawer"]["room"] == "runbooks"
    assert hit["drawer"]["content"] == DEPLOY
    assert hit["drawer"]["kind"] == "fact"
    assert body["groups"] == [["migrations"], ["deploy"]]
    assert body["next"] is None


def test_only_current_drawers_are_found(api):
    old = write(api, DEPLOY)
    new = write(api, DEPLOY.replace("web workers", "job queue workers"))
    api.post(f"/api/drawers/{old}/supersede", {"by": new}, format="json")
    assert found_ids(search(api, q="deploy migrations")) == [new]


def test_wing_room_and_agent_narrow_the_search(api, user):
    in_ops = write(api, DEPLOY)
    in_dev = write(api, DEPLOY, wing="dev")
    in_other_room = write(api, DEPLOY, room="notes")
    other_agent = write(agent_client("another-agent"), DEPLOY, wing="dev", room="notes")
    assert found_ids(search(api, q="deploy migrations", wing="ops")) == [in_other_room, in_ops]
    assert found_ids(search(api, q="deploy migrations", wing="dev", room="runbooks")) == [in_dev]
    assert found_ids(search(api, q="deploy migrations", agent=user.username)) == [
        in_other_room,
        in_dev,
        in_ops,
    ]
    assert found_ids(search(api, q="deploy migrations", agent="another-agent")) == [other_agent]


def test_a_key_finds_only_drawers_of_its_wings(api, user):
    reached = write(api, DEPLOY)
    write(api, DEPLOY, wing="secret")
    scoped = agent_client(user.username, wings=("ops",), rights=("read",))
    assert found_ids(search(scoped, q="deploy migrations")) == [reached]
    # A wing out of reach is not found, whether it exists or not (as over MCP).
    for wing in ("secret", "nowhere"):
        refused = search(scoped, q="deploy migrations", wing=wing)
        assert (refused.status_code, refused.json()["code"]) == (404, "wing_not_found")


def test_pages_follow_the_cursor_without_repeats_or_gaps(api):
    ids = [write(api, f"{DEPLOY} Attempt number {n}.") for n in range(5)]
    ids += [write(api, f"The database was moved, attempt {n}.") for n in range(3)]
    seen = []
    response = search(api, q="deploy database migrations", limit=3)
    while True:
        body = response.json()
        assert len(body["results"]) <= 3
        seen += [hit["drawer"]["id"] for hit in body["results"]]
        if body["next"] is None:
            break
        response = api.get(body["next"])
    assert seen == [*reversed(ids[:5]), *reversed(ids[5:])]


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({}, "invalid"),
        ({"q": ""}, "invalid"),
        ({"q": "   "}, "invalid"),
        ({"q": "deploy\x00"}, "invalid"),
        ({"q": "a an of"}, "invalid"),
        ({"q": "東"}, "query_too_short"),
        ({"q": "の"}, "query_too_short"),
        ({"q": "deploy", "limit": "0"}, "invalid"),
        ({"q": "deploy", "limit": "201"}, "invalid"),
        ({"q": "deploy", "limit": "ten"}, "invalid"),
        ({"q": "deploy", "limit": "\uff15"}, "invalid"),  # a full-width 5
        ({"q": "deploy", "limit": "1_0"}, "invalid"),
        ({"q": "deploy", "limit": " 5"}, "invalid"),
        ({"q": "deploy", "limit": "5.0"}, "invalid"),
        ({"q": "deploy", "limit": "9" * 30}, "invalid"),
        ({"q": "deploy", "cursor": "!!!"}, "invalid_cursor"),
        ({"q": "deploy", "cursor": "WzFd"}, "invalid_cursor"),  # base64 of "[1]"
        ({"q": "x" * 1001}, "invalid"),
    ],
)
def test_bad_input_is_refused(api, params, code):
    response = search(api, **params)
    assert response.status_code == 400
    assert response.json()["code"] == code


def test_a_viewer_without_a_key_reads_too(client, django_user_model, dedup_settings, api):
    deploy = write(api, DEPLOY)
    viewer = django_user_model.objects.create_user("viewer", password="secret-pass-1")
    client.force_login(viewer)
    assert found_ids(client.get("/api/search", {"q": "deploy migrations"})) == [deploy]


def test_anonymous_requests_are_refused(anonymous_api):
    assert search(anonymous_api, q="deploy").status_code == 401


def test_the_search_is_in_the_schema(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    get = schema["paths"]["/api/search"]["get"]
    names = {parameter["name"] for parameter in get["parameters"]}
    assert names >= {"q", "wing", "room", "agent", "limit", "cursor"}
    assert "SearchPage" in str(get["responses"]["200"])


def count_queries(api, **params) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = search(api, **params)
    assert response.status_code == 200
    return len(captured)


def test_the_number_of_queries_does_not_grow_with_the_hits(api):
    write(api, DEPLOY)
    one = count_queries(api, q="deploy migrations")
    for n in range(8):
        write(api, f"{DEPLOY} Attempt number {n}.", room=f"room-{n % 3}")
    many = count_queries(api, q="deploy migrations")
    assert one == many
