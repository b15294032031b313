"""An agent key's wings, rights and user: one rule for the admin, the `agent_key` command and
the manager (`api.models.clean_scope`, `refuse_a_person`), and `agent_key list` shows whatever a
row holds."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from api.models import AgentKey
from tests.api.conftest import rest_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(django_user_model):
    """An agent's user, as its first key made it (in the agents' group, no password)."""
    key, _ = AgentKey.objects.issue(agent="scout", wings=["*"], rights=["read"])
    key.delete()
    return django_user_model.objects.get(username="scout")


def add(client, **fields):
    data = {"name": "scout key", "wings": "ops", "rights": ["read"], "expiry_date": ""}
    return client.post("/admin/api/agentkey/add/", {**data, **fields})


def test_the_admin_saves_a_key_of_a_valid_scope(admin_client, agent):
    response = add(admin_client, user=agent.pk, wings="ops, notes ,ops", rights=["write", "read"])
    assert response.status_code == 302
    key = AgentKey.objects.get()
    assert (key.wings, key.rights) == (["notes", "ops"], ["read", "write"])


def test_the_admin_reads_wings_typed_as_json(admin_client, agent):
    """As the field took them before it was a comma-separated line."""
    assert add(admin_client, user=agent.pk, wings='["*"]').status_code == 302
    assert AgentKey.objects.get().wings == ["*"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"rights": ["fly"]}, "rights"),
        ({"rights": []}, "rights"),
        ({"wings": " , "}, "wings"),
        ({"wings": ""}, "wings"),
        ({"wings": '["*"]', "rights": '["fly", 5]'}, "rights"),
        ({"wings": '["ops", 5]'}, "wings"),
    ],
    ids=["unknown right", "no right", "only commas", "no wing", "JSON rights", "JSON wings"],
)
def test_the_admin_refuses_a_key_of_a_bad_scope(admin_client, agent, fields, field):
    response = add(admin_client, user=agent.pk, **fields)
    assert response.status_code == 200
    assert response.context["adminform"].form.errors[field]
    assert not AgentKey.objects.exists()


def test_the_admin_shows_a_keys_scope_as_it_is_typed(admin_client):
    key, _ = AgentKey.objects.issue(agent="scout", wings=["ops", "notes"], rights=["read"])
    page = admin_client.get(f"/admin/api/agentkey/{key.pk}/change/").content.decode()
    assert 'value="notes, ops"' in page
    assert 'type="checkbox" name="rights" value="read"' in page


@pytest.mark.parametrize(
    ("wings", "rights", "field"),
    [
        (["*"], ["fly", 5], "rights"),
        (["*"], ["fly"], "rights"),
        (["*"], [], "rights"),
        (["*"], "read", "rights"),
        ([], ["read"], "wings"),
        (["ops", " "], ["read"], "wings"),
        ([5], ["read"], "wings"),
        ("ops", ["read"], "wings"),
        (["ops\x01"], ["read"], "wings"),
        (["w" * 201], ["read"], "wings"),
    ],
    ids=[
        *("not a word", "unknown", "none", "a string", "no wing", "blank", "number", "string"),
        *("a control character", "too long"),
    ],
)
def test_the_model_refuses_a_bad_scope(agent, wings, rights, field):
    """What the admin's JSON fields once took: the model's clean, whatever the form sends."""
    key = AgentKey(user=agent, name="k", wings=wings, rights=rights)
    with pytest.raises(ValidationError) as refused:
        key.clean()
    assert list(refused.value.message_dict) == [field]


def test_the_manager_refuses_a_bad_scope_and_writes_nothing(django_user_model):
    with pytest.raises(ValidationError):
        AgentKey.objects.issue(agent="scout", wings=["*"], rights=["fly"])
    assert not AgentKey.objects.exists()
    assert not django_user_model.objects.exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--rights", "read,fly"], r"^--rights: Unknown rights \['fly'\]; use any of read, write"),
        (["--rights", " , "], r"^--rights: Give at least one of read, write, delete\.$"),
        (["--wings", " , "], r"^--wings: Name at least one wing, or \*\.$"),
    ],
    ids=["unknown right", "no right", "no wing"],
)
def test_the_command_refuses_a_bad_scope_by_the_same_rule(arguments, message):
    with pytest.raises(CommandError, match=message):
        call_command("agent_key", "create", "scout", "--wings", "*", *arguments)
    assert not AgentKey.objects.exists()


def test_the_list_shows_any_stored_row(agent):
    """A row the admin saved before it checked the scope, e.g. rights ["fly", 5]."""
    AgentKey.objects.create_key(user=agent, name="odd", wings=[None, "ops"], rights=["fly", 5])
    AgentKey.objects.create_key(user=agent, name="odder", wings="ops", rights={"a": 1})
    out = StringIO()
    call_command("agent_key", "list", stdout=out)
    first, second = out.getvalue().splitlines()
    assert "wings=null,ops  rights=fly,5  active" in first
    assert 'wings="ops"  rights={"a": 1}  active' in second


def test_the_admin_makes_no_key_for_a_person_s_login(admin_client, curator, agent):
    """A curator's login made an agent's: its key decided review items as them. The admin offers
    agents only, as `agent_key create` refuses a person's login."""
    page = admin_client.get("/admin/api/agentkey/add/")
    offered = list(page.context["adminform"].form.fields["user"].queryset)
    assert offered == [agent]
    response = add(admin_client, user=curator.pk)
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["user"]
    assert not AgentKey.objects.exists()
    assert not curator.groups.filter(name="agents").exists()


@pytest.mark.parametrize("person", ["curator", "admin_user"])
def test_the_model_refuses_a_key_for_a_person_s_login(request, person):
    """The rule `agent_key create` applies, for any form over the model."""
    user = request.getfixturevalue(person)
    key = AgentKey(user=user, name="k", wings=["*"], rights=["read"])
    with pytest.raises(ValidationError) as refused:
        key.clean()
    (message,) = refused.value.message_dict["user"]
    assert message.startswith(f"{user.username} is a person's login")


def test_a_key_s_agent_is_not_changed_in_the_admin(admin_client, agent, curator):
    key, _ = AgentKey.objects.issue(agent="scout", wings=["ops"], rights=["read"])
    form = {"name": "k", "user": curator.pk, "wings": "ops", "rights": ["read"]}
    response = admin_client.post(f"/admin/api/agentkey/{key.pk}/change/", form)
    assert response.status_code == 302
    assert AgentKey.objects.get(pk=key.pk).user == agent


def test_the_admin_has_one_kind_of_key(admin_client):
    """djangorestframework-api-key's own admin made keys no route accepts (each request 401):
    keys are the agent keys only."""
    index = admin_client.get("/admin/").content.decode()
    assert "/admin/api/agentkey/" in index
    assert "/admin/rest_framework_api_key/" not in index
    assert admin_client.get("/admin/rest_framework_api_key/apikey/").status_code == 404
    assert admin_client.get("/admin/rest_framework_api_key/apikey/add/").status_code == 404


@pytest.mark.parametrize(
    ("wings", "message"),
    [
        ("\u2800", r"^--wings: wing must not be blank\.$"),  # a Braille blank: a wing unseen
        ("\u3164", r"^--wings: wing must not be blank\.$"),  # a Hangul filler
        ("*,alpha", r"^--wings: \* is every wing: give it alone"),
        ("alpha, *", r"^--wings: \* is every wing: give it alone"),
    ],
    ids=["braille blank", "hangul filler", "every wing and one", "one and every wing"],
)
def test_the_command_holds_wings_to_a_writes_rule(wings, message):
    """A key for "\u2800" listed a wing named so, where a write there is 400 `empty_label`;
    `*,alpha` was stored and listed as it was typed."""
    with pytest.raises(CommandError, match=message):
        call_command("agent_key", "create", "scout", "--wings", wings)
    assert not AgentKey.objects.exists()


@pytest.mark.parametrize(
    ("wings", "stored"),
    [("*", ["*"]), (" * ", ["*"]), ("x/y", ["x/y"]), ("ops\u200d, ops", ["ops"])],
    ids=["every wing", "every wing, spaced", "a restored wing's slash", "a look-alike"],
)
def test_the_command_stores_wings_as_a_write_names_them(wings, stored):
    """A '/' is kept: an import restores a wing holding one, which a key names and MCP reaches."""
    call_command("agent_key", "create", "scout", "--wings", wings, stdout=StringIO())
    assert AgentKey.objects.get().wings == stored


@pytest.mark.parametrize("wings", ["\u2800", "*, alpha", '["*", "alpha"]'])
def test_the_admin_holds_wings_to_the_same_rule(admin_client, agent, wings):
    response = add(admin_client, user=agent.pk, wings=wings)
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["wings"]
    assert not AgentKey.objects.exists()


def test_a_key_made_before_of_every_wing_and_one_still_reaches_every_wing(agent):
    """Stored so before the rule: `*` is every wing, whatever else the row holds."""
    key, secret = AgentKey.objects.issue(agent="scout", wings=["*"], rights=["read"])
    AgentKey.objects.filter(pk=key.pk).update(wings=["*", "alpha"])
    response = rest_of(secret).get("/api/wings")
    assert response.status_code == 200
    assert response.json() == []
