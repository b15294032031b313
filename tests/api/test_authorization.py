"""Who may do what: every state-changing route x every kind of caller -> the status, and nothing
written where refused. Keys are agent keys; viewers are people without a role."""

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, Permission
from django.utils import timezone
from rest_framework.test import APIClient

from api.models import RIGHTS, AgentKey
from dedup import imports, services
from palace.models import AuditEntry, Checkpoint, Drawer, EntityAlias, Mention
from tests.api.conftest import rest_of
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db

CALLERS = ["anonymous", "viewer", "viewer_key", "key_in", "key_out", "curator", "admin"]


@pytest.fixture
def world(django_user_model, dedup_settings):
    drawer = services.drawer_write_in(wing="ops", room="dev", content="Port 8080 for dev.").drawer
    entity = services.entity_resolve(name="Katarina", kind="person").entity
    viewer = django_user_model.objects.create_user("vic", password="pw-secret-1")
    curator = django_user_model.objects.create_user("cora", password="pw-secret-1")
    group, _ = Group.objects.get_or_create(name="curators")
    group.permissions.add(Permission.objects.get(codename="decide"))
    curator.groups.add(group)
    admin = django_user_model.objects.create_superuser("ada", password="pw-secret-1")

    def session(user):
        client = APIClient()
        client.force_login(user)
        return client

    def viewer_key():
        # A key whose user is a viewer (a person's login, not an agent): refused for everything
        # (`key_not_for_agent`, tests/api/test_person_keys.py).
        _, secret = AgentKey.objects.create_key(
            user=viewer, name="v", wings=["*"], rights=["read", "write", "delete"]
        )
        return rest_of(secret)

    clients = {
        "anonymous": lambda: APIClient(),
        "viewer": lambda: session(viewer),
        "viewer_key": viewer_key,
        "key_in": lambda: agent_client("scout", wings=["ops", "diary", "general"]),
        "key_out": lambda: agent_client("scribe", wings=["elsewhere"]),
        "curator": lambda: session(curator),
        "admin": lambda: session(admin),
    }
    return {"drawer": drawer, "entity": entity, "clients": clients}


def rows() -> dict:
    return {
        model.__name__: model.objects.count()
        for model in (Drawer, Mention, EntityAlias, AuditEntry, Checkpoint)
    }


ROUTES = {
    "drawer write": (
        "post",
        lambda w: "/api/wings/ops/rooms/dev/drawers",
        {"content": "Backups run at two."},
    ),
    "drawer delete": ("delete", lambda w: f"/api/drawers/{w['drawer'].uuid}", None),
    "drawer supersede": ("post", lambda w: f"/api/drawers/{w['drawer'].uuid}/supersede", {}),
    "mention": (
        "post",
        lambda w: f"/api/drawers/{w['drawer'].uuid}/mentions",
        {"name": "Grace Hopper", "kind": "person"},
    ),
    "diary": (
        "post",
        lambda w: "/api/diary",
        {"wing": "ops", "content": "Today I fixed the build."},
    ),
    "checkpoint": (
        "post",
        lambda w: "/api/checkpoints",
        {"id": "c-1", "items": [{"content": "A fact worth keeping.", "destination": "general"}]},
    ),
    "alias": ("post", lambda w: f"/api/entities/{w['entity'].uuid}/aliases", {"alias": "Kat"}),
    "sweep start": ("post", lambda w: "/api/sweeps", {}),
}
OK = {
    "drawer write": 201,
    "drawer delete": 204,
    "drawer supersede": 200,
    "mention": 201,
    "diary": 201,
    "checkpoint": 201,
    "alias": 200,
    "sweep start": 202,
}
# The expected status of each caller on each route; None: the route's success status.
TABLE = {
    "anonymous": dict.fromkeys(ROUTES, 401),
    "viewer": dict.fromkeys(ROUTES, 403),
    "viewer_key": dict.fromkeys(ROUTES, 403),
    # An alias steers sightings in every wing: a key reaching only some is refused it.
    "key_in": {**dict.fromkeys(ROUTES, None), "sweep start": 403, "alias": 403},
    "key_out": {
        "drawer write": 403,  # out_of_scope
        "drawer delete": 404,  # a drawer out of reach is not there
        "drawer supersede": 404,
        "mention": 404,
        "diary": 403,
        "checkpoint": 403,
        "alias": 403,
        "sweep start": 403,
    },
    "curator": dict.fromkeys(ROUTES, None),
    "admin": dict.fromkeys(ROUTES, None),
}


@pytest.mark.parametrize("route", list(ROUTES))
@pytest.mark.parametrize("caller", CALLERS)
def test_authorization_table(world, caller, route):
    method, url, body = ROUTES[route]
    expected = TABLE[caller][route] or OK[route]
    client = world["clients"][caller]()
    before = rows()
    response = getattr(client, method)(url(world), body, format="json")
    assert response.status_code == expected, response.content
    if expected >= 400:
        assert rows() == before
        assert set(response.json()) >= {"error", "code"}


def test_a_key_out_of_scope_writing_is_refused_out_of_scope(world):
    client = world["clients"]["key_out"]()
    response = client.post("/api/wings/ops/rooms/dev/drawers", {"content": "x y z"}, format="json")
    assert response.json()["code"] == "out_of_scope"


@pytest.mark.parametrize(
    ("url", "act"),
    [
        ("/api/sweeps", "Starting a sweep"),
        ("/api/sweeps/1/apply", "Applying a sweep"),
        ("/api/sweeps/1/reverse", "Reversing a sweep"),
        ("/api/sweeps/1/resume", "Resuming a sweep"),
        ("/api/review/items/link-1/decisions", "Deciding review items"),
        ("/api/review/decisions/1/revert", "Reverting decisions"),
        (f"/api/review/batches/{uuid.uuid4()}/revert", "Reverting decisions"),
    ],
    ids=["start", "apply", "reverse", "resume", "decide", "revert", "batch revert"],
)
def test_a_refusal_to_decide_names_what_was_refused(world, url, act):
    """An agent key of every right on every wing is refused by the decide permission: the
    message says what that permission was needed for; the code stays permission_denied."""
    response = agent_client("scout", wings=["*"]).post(url, {}, format="json")
    assert response.status_code == 403
    assert response.json() == {
        "error": f"{act} needs the curators' decide permission.",
        "code": "permission_denied",
    }


def test_a_key_made_for_a_curators_login_decides_nothing(world, django_user_model):
    """Made before the admin refused a person's login as a key's agent, such a key decided review
    items as the curator (it is refused for everything: tests/api/test_person_keys.py)."""
    key, secret = AgentKey.objects.issue(agent="scout", wings=["*"], rights=list(RIGHTS))
    AgentKey.objects.filter(pk=key.pk).update(user=django_user_model.objects.get(username="cora"))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    response = client.post("/api/review/items/d1/decisions", {"action": "dismiss"}, format="json")
    assert response.status_code == 403
    assert response.json()["code"] == "key_not_for_agent"


def test_forged_agent_is_refused_and_the_agents_own_entry_is_stored(world):
    forger = agent_client("mallory", wings=["*"])
    before = Drawer.objects.count()
    forged = forger.post(
        "/api/diary",
        {"wing": "agents", "content": "Stand-up: nothing blocking.", "agent": "scout"},
        format="json",
    )
    assert forged.status_code == 403
    assert Drawer.objects.count() == before
    forged_room = forger.post(
        "/api/wings/agents/rooms/diary/drawers",
        {"content": "Stand-up: nothing blocking.", "agent": "scout"},
        format="json",
    )
    assert forged_room.status_code == 403
    assert Drawer.objects.count() == before
    own = agent_client("scout", wings=["agents"]).post(
        "/api/diary", {"wing": "agents", "content": "Stand-up: nothing blocking."}, format="json"
    )
    assert own.status_code == 201
    assert own.json()["created"] is True
    assert own.json()["agent"] == "scout"


def test_a_key_writes_as_its_agent(world):
    response = world["clients"]["key_in"]().post(
        "/api/wings/ops/rooms/dev/drawers", {"content": "Alerts at ninety."}, format="json"
    )
    assert response.json()["agent"] == "scout"


def test_reads_are_limited_to_the_keys_wings(world):
    services.drawer_write_in(wing="secret", room="r", content="The vault code is hidden.")
    client = agent_client("scout", wings=["ops"], rights=["read"])
    assert [w["name"] for w in client.get("/api/wings").json()] == ["ops"]
    secret = Drawer.objects.get(room__wing__name="secret")
    assert client.get(f"/api/drawers/{secret.uuid}").status_code == 404
    assert client.get("/api/wings/secret/rooms/r/drawers").status_code == 404
    assert client.get(f"/api/drawers/{world['drawer'].uuid}").status_code == 200


def test_a_read_only_key_cannot_write(world):
    client = agent_client("scout", wings=["*"], rights=["read"])
    before = rows()
    assert (
        client.post(
            "/api/wings/ops/rooms/dev/drawers", {"content": "New text here."}, format="json"
        ).status_code
        == 403
    )
    assert rows() == before


def test_write_key_without_delete_cannot_delete_or_supersede(world):
    client = agent_client("scout", wings=["*"], rights=["read", "write"])
    before = rows()
    assert client.delete(f"/api/drawers/{world['drawer'].uuid}").status_code == 403
    assert (
        client.post(f"/api/drawers/{world['drawer'].uuid}/supersede", {}, format="json").status_code
        == 403
    )
    assert rows() == before


@pytest.mark.parametrize("state", ["revoked", "expired"])
def test_revoked_and_expired_keys_are_refused(world, state):
    key, secret = AgentKey.objects.issue(agent="scout", wings=["*"], rights=["read"])
    if state == "revoked":
        key.revoked = True
    else:
        key.expiry_date = timezone.now() - timedelta(days=1)
    key.save()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    assert client.get("/api/wings").status_code == 401


def test_bearer_and_token_both_authenticate_and_last_use_is_recorded(world):
    key, secret = AgentKey.objects.issue(agent="scout", wings=["*"], rights=["read"])
    for keyword in ("Token", "Bearer"):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"{keyword} {secret}")
        assert client.get("/api/wings").status_code == 200
    key.refresh_from_db()
    assert key.last_used_at is not None


def test_keys_are_hashed_at_rest(world):
    key, secret = AgentKey.objects.issue(agent="scout", wings=["*"], rights=["read"])
    assert secret not in key.hashed_key
    assert secret.split(".")[1] not in str(AgentKey.objects.filter(pk=key.pk).values().get())


def test_deleted_content_in_the_audit_log_is_for_curators_only(world):
    world["clients"]["curator"]().delete(f"/api/drawers/{world['drawer'].uuid}")
    viewer = world["clients"]["viewer"]().get("/api/review/decisions").json()["results"]
    curator = world["clients"]["curator"]().get("/api/review/decisions").json()["results"]
    assert [e["before"] for e in viewer if e["target_type"] == "drawer"] == [None]
    assert [e["before"]["content"] for e in curator if e["target_type"] == "drawer"] == [
        "Port 8080 for dev."
    ]


def test_an_import_reversals_removed_content_is_for_curators_only(world, tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_text('{"uid": "n1", "text": "The vault code is 4471."}\n')
    imported = imports.import_create(
        source=str(path), format="jsonl", wing="ops", mapping={"id": "uid", "content": "text"}
    )
    imports.import_run(imported, path=path)
    imports.import_reverse(imported=imported)
    rows = {}
    for role in ("viewer", "curator", "admin"):
        entries = world["clients"][role]().get("/api/review/decisions?action=import.reverse")
        rows[role] = [
            e["before"] for e in entries.json()["results"] if e["target_type"] == "drawer"
        ]
    keyed = world["clients"]["viewer_key"]().get("/api/review/decisions?action=import.reverse")
    assert keyed.json()["code"] == "key_not_for_agent"  # a person's key reads nothing at all
    assert rows["viewer"] == [None]
    assert [before["content"] for before in rows["curator"]] == ["The vault code is 4471."]
    assert [before["content"] for before in rows["admin"]] == ["The vault code is 4471."]


def test_deleting_a_user_keeps_their_audit_rows_and_label(world, django_user_model):
    """A user can be deleted, and the audit rows that name them stay exactly as they were."""
    world["clients"]["curator"]().delete(f"/api/drawers/{world['drawer'].uuid}")
    fields = (
        *("pk", "actor_id", "actor_label", "action", "target_type", "target_id"),
        *("before", "after", "data"),
    )
    entry_before = AuditEntry.objects.values(*fields).get(action="drawer.delete")
    django_user_model.objects.get(username="cora").delete()
    assert AuditEntry.objects.values(*fields).get(action="drawer.delete") == entry_before
    assert entry_before["actor_label"] == "cora"


def test_an_agents_rights_are_read_in_one_query(django_user_model, django_assert_num_queries):
    """Most requests are agents': their group answers before the permission tables are read."""
    from api.scopes import scope_for

    key, _ = AgentKey.objects.issue(agent="scribe", wings=["*"], rights=["read", "write"])
    user = django_user_model.objects.get(username="scribe")
    with django_assert_num_queries(1):
        scope = scope_for(user, key)
    assert scope.rights == frozenset({"read", "write"})


def test_a_signed_in_agent_key_s_rights_need_no_further_query(
    django_user_model, django_assert_num_queries
):
    """The sign-in's own query judged the key's login an agent (`for_agent`): the scope is
    worked out from it, no query more."""
    from api.authentication import AgentKeyAuthentication
    from api.scopes import scope_for

    _, secret = AgentKey.objects.issue(agent="scribe", wings=["*"], rights=["read", "write"])
    user, key = AgentKeyAuthentication().authenticate_key(secret)
    with django_assert_num_queries(0):
        scope = scope_for(user, key)
    assert scope.rights == frozenset({"read", "write"})


def test_a_curator_s_rights_are_read_by_the_permission_first(
    django_user_model, django_assert_num_queries
):
    """Signed in without an agent key, the permission is asked first (a curator's two queries);
    only someone without it is asked about the agents' group too."""
    from api.scopes import scope_for

    curator = django_user_model.objects.create_user("cora")
    curator.user_permissions.add(Permission.objects.get(codename="decide"))
    curator = django_user_model.objects.get(pk=curator.pk)
    with django_assert_num_queries(2):
        assert scope_for(curator, None).rights == frozenset({"read", "write", "delete"})
    viewer = django_user_model.objects.create_user("vic")
    with django_assert_num_queries(3):
        assert scope_for(viewer, None).rights == frozenset({"read"})
