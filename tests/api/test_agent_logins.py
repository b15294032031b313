"""An agent is a login that is no person's (`api.models.agent_condition`): in the agents' group
and neither staff, a superuser, a login with a password nor a curator. A curator put in the
agents' group in the admin (carol, the production trial) got a key from `agent_key create` that
decided review items as her: the membership alone made an agent. Now the sign-in, the command,
the admin's key form, `agent_key list` and a person's rights ask the one rule."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.utils import timezone

from api.authentication import AgentKeyAuthentication
from api.models import ALL_WINGS, RIGHTS, AgentKey, agent_users, is_agent
from palace.models import AGENTS_GROUP
from review.curators import curators_group
from tests.api.conftest import rest_of, row_counts
from tests.conftest import person_client

pytestmark = pytest.mark.django_db

MEMORY = "The nightly backup copies the object store to the second region at two."


def made_a_person(login, mark: str) -> None:
    """What makes a login a person's, one mark at a time."""
    if mark == "staff":
        login.is_staff = True
    elif mark == "superuser":
        login.is_superuser = True
    elif mark == "password":
        login.set_password("secret-pass-2")
    if mark == "curator":
        login.groups.add(curators_group())
    login.save()


@pytest.fixture
def carol(world):
    """The curator, put in the agents' group as the admin's user form lets one."""
    curator = world["user"]
    curator.is_staff = True
    curator.save(update_fields=["is_staff"])
    curator.groups.add(Group.objects.get_or_create(name=AGENTS_GROUP)[0])
    return curator


def key_made_before_the_rule(login, rights: list[str]) -> str:
    """A key for a person's login, as `issue` and the admin once made one (they refuse now)."""
    _, secret = AgentKey.objects.create_key(
        user=login, name=login.username, wings=[ALL_WINGS], rights=rights
    )
    return secret


def test_issue_makes_no_key_for_a_persons_login(carol):
    """Nor for one made under the very name while `agent_key create` ran: the command had
    asked before it was there (PostgreSQL's race: tests/review/test_login_name_races.py)."""
    with pytest.raises(ValidationError, match=r"cora is a person's login"):
        AgentKey.objects.issue(agent="cora", wings=[ALL_WINGS], rights=["read"])
    assert not AgentKey.objects.exists()


def test_the_command_makes_no_key_for_a_curator_in_the_agents_group(carol):
    with pytest.raises(CommandError, match=r"^cora is a person's login"):
        call_command("agent_key", "create", "cora", "--wings", "*", "--rights", "read,write,delete")
    assert not AgentKey.objects.exists()


def test_a_key_for_a_curator_in_the_agents_group_decides_nothing(world, carol):
    """The trial's key: made for her login (as `issue` or the admin once made one)."""
    secret = key_made_before_the_rule(carol, list(RIGHTS))
    before = row_counts()
    response = rest_of(secret).post(
        f"/api/review/items/{world['item']}/decisions", {"action": "dismiss"}, format="json"
    )
    assert (response.status_code, response.json()["code"]) == (403, "key_not_for_agent")
    assert row_counts() == before


@pytest.mark.parametrize("mark", ["staff", "superuser", "password", "curator"])
def test_an_agents_key_is_refused_once_its_login_is_a_persons(world, mark):
    key, secret = AgentKey.objects.issue(agent="scout", wings=[ALL_WINGS], rights=list(RIGHTS))
    assert rest_of(secret).get("/api/wings").status_code == 200
    made_a_person(key.user, mark)
    assert not is_agent(key.user)
    before = row_counts()
    response = rest_of(secret).post(
        "/api/wings/ops/rooms/dev/drawers", {"content": MEMORY}, format="json"
    )
    assert (response.status_code, response.json()["code"]) == (403, "key_not_for_agent")
    assert row_counts() == before


def test_an_agent_granted_the_decide_permission_is_still_an_agent(world):
    key, _ = AgentKey.objects.issue(agent="scout", wings=[ALL_WINGS], rights=list(RIGHTS))
    key.user.user_permissions.add(Permission.objects.get(codename="decide"))
    assert is_agent(key.user)


def test_a_key_signs_in_with_its_login_judged_in_one_query(world, django_assert_num_queries):
    key, secret = AgentKey.objects.issue(agent="scout", wings=[ALL_WINGS], rights=list(RIGHTS))
    AgentKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now())
    with django_assert_num_queries(1):
        user, _ = AgentKeyAuthentication().authenticate_key(secret)
    assert user.username == "scout"


def test_the_admin_offers_no_curator_in_the_agents_group(admin_client, carol):
    AgentKey.objects.issue(agent="scout", wings=[ALL_WINGS], rights=["read"])
    assert [user.username for user in agent_users()] == ["scout"]
    response = admin_client.post(
        "/admin/api/agentkey/add/",
        {"name": "k", "user": carol.pk, "wings": "ops", "rights": ["read"], "expiry_date": ""},
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["user"]
    assert AgentKey.objects.filter(user=carol).count() == 0


def test_the_list_says_a_key_of_a_persons_login_is_refused(world, carol):
    AgentKey.objects.issue(agent="scout", wings=[ALL_WINGS], rights=["read"])
    key_made_before_the_rule(carol, ["read"])
    out = StringIO()
    call_command("agent_key", "list", stdout=out)
    scout, cora = out.getvalue().splitlines()
    assert "  active  " in scout
    assert "  refused: made for a person's login  " in cora


def test_a_person_in_the_agents_group_writes_only_by_their_role(world, django_user_model):
    """A viewer put in the agents' group was given an agent's rights on their own token."""
    viewer = django_user_model.objects.create_user("vic", password="secret-pass-1")
    viewer.groups.add(Group.objects.get_or_create(name=AGENTS_GROUP)[0])
    before = row_counts()
    response = person_client(viewer).post(
        "/api/wings/ops/rooms/dev/drawers", {"content": MEMORY}, format="json"
    )
    assert (response.status_code, response.json()["code"]) == (403, "permission_denied")
    assert row_counts() == before
