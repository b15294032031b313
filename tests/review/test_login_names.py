"""A person's login is held to the rule an agent's name is (`dedup.user_names`): its name must
not read as another user's, wherever it is made or renamed (`create_curator`, `createsuperuser`,
the admin's user forms), and two made at once whose names read alike cannot both be. The audit
log names its actor by name alone: a curator "Carol" beside the agent "carol" read as one."""

from __future__ import annotations

from collections.abc import Callable
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from api.management.commands import agent_key
from api.models import ALL_WINGS, AgentKey
from review.management.commands import create_curator
from tests.conftest import Terminal

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-pass-phrase-1"
READS_AS_CAROL = r"'Carol' reads as the user 'carol': the audit log would not tell them apart"


def an_agent(name: str) -> None:
    AgentKey.objects.issue(agent=name, wings=[ALL_WINGS], rights=["read"])


@pytest.fixture
def carol():
    """An agent: its rows in the audit log read "carol"."""
    an_agent("carol")


def usernames(django_user_model) -> list[str]:
    return sorted(django_user_model.objects.values_list("username", flat=True))


def test_a_curator_whose_name_reads_as_an_agents_is_refused(carol, django_user_model):
    with pytest.raises(CommandError, match=READS_AS_CAROL):
        call_command("create_curator", "Carol", "--password", PASSWORD)
    assert usernames(django_user_model) == ["carol"]


def test_a_curator_in_letters_of_two_scripts_is_refused(django_user_model):
    with pytest.raises(CommandError, match=r"mixes the letters of Cyrillic and Latin"):
        call_command("create_curator", "c\u0430rol", "--password", PASSWORD)
    assert usernames(django_user_model) == []


def test_an_existing_login_made_a_curator_keeps_its_name(django_user_model):
    """The rule is a new name's: "Carol" made before the rule stays, and can be made a curator."""
    django_user_model.objects.create_user("carol")
    django_user_model.objects.create_user("Carol")
    call_command("create_curator", "Carol", "--password", PASSWORD)
    assert django_user_model.objects.get(username="Carol").groups.filter(name="curators").exists()


@pytest.mark.parametrize("given", ["option", "environment"])
def test_createsuperuser_without_input_refuses_a_look_alike(
    carol, django_user_model, monkeypatch, given
):
    if given == "option":
        arguments = {"username": "Carol"}
    else:
        monkeypatch.setenv("DJANGO_SUPERUSER_USERNAME", "Carol")
        arguments = {}
    with pytest.raises(CommandError, match=READS_AS_CAROL):
        call_command("createsuperuser", interactive=False, email="", **arguments)
    assert usernames(django_user_model) == ["carol"]


@pytest.mark.parametrize("username", ["a\x00b", "a\x01b", "x" * 400])
def test_createsuperuser_without_input_refuses_an_odd_name_as_such(django_user_model, username):
    """A NUL reached the database (PostgreSQL: a DataError, with a traceback) before the field
    refused it."""
    with pytest.raises(CommandError, match=r"valid username|at most 150 characters"):
        call_command("createsuperuser", interactive=False, username=username, email="")
    assert usernames(django_user_model) == []


def test_createsuperuser_without_input_makes_a_name_no_one_reads_as(carol, django_user_model):
    call_command("createsuperuser", interactive=False, username="dave", email="", stdout=None)
    assert django_user_model.objects.get(username="dave").is_superuser


def test_createsuperuser_asks_again_for_a_typed_look_alike(carol, django_user_model, capsys):
    answers = iter(["Carol", "dave", ""])  # the name twice, then the email
    with (
        mock.patch("builtins.input", lambda message: next(answers)),
        mock.patch("getpass.getpass", lambda prompt="": PASSWORD),
    ):
        call_command("createsuperuser", interactive=True, stdin=Terminal())
    said = capsys.readouterr()
    assert "reads as the user 'carol'" in said.err
    assert "Superuser created successfully." in said.out
    assert usernames(django_user_model) == ["carol", "dave"]


def add_login(client, username: str):
    return client.post(
        reverse("admin:auth_user_add"),
        {"username": username, "usable_password": "false"},
    )


@pytest.mark.parametrize(
    ("username", "refusal"),
    [
        ("c\u0430rol", "mixes the letters of Cyrillic and Latin"),
        ("Stra\u00dfe", "reads as the user 'strasse'"),  # Django's own check is case-blind in ASCII
    ],
    ids=["cyrillic a", "sharp s"],
)
def test_the_admins_add_form_refuses_a_look_alike(
    carol, admin_client, django_user_model, username, refusal
):
    an_agent("strasse")
    response = add_login(admin_client, username)
    assert response.status_code == 200
    assert refusal in " ".join(response.context["adminform"].form.errors["username"])
    assert usernames(django_user_model) == ["admin", "carol", "strasse"]


def test_the_admins_add_form_makes_a_name_no_one_reads_as(carol, admin_client, django_user_model):
    response = add_login(admin_client, "dave")
    assert response.status_code == 302
    assert usernames(django_user_model) == ["admin", "carol", "dave"]


def rename(client, user, username: str):
    return client.post(
        reverse("admin:auth_user_change", args=[user.pk]),
        {
            "username": username,
            "is_active": "on",
            "date_joined_0": "2026-12-07",
            "date_joined_1": "10:00:00",
            "initial-date_joined_0": "2026-12-07",
            "initial-date_joined_1": "10:00:00",
        },
    )


def test_the_admins_rename_to_a_look_alike_is_refused(carol, admin_client, django_user_model):
    dave = django_user_model.objects.create_user("dave")
    response = rename(admin_client, dave, "CAROL")
    assert response.status_code == 200
    assert "reads as the user" in " ".join(response.context["adminform"].form.errors["username"])
    assert usernames(django_user_model) == ["admin", "carol", "dave"]


def test_the_admins_rename_to_ones_own_name_in_capitals_is_taken(admin_client, django_user_model):
    dave = django_user_model.objects.create_user("dave")
    response = rename(admin_client, dave, "Dave")
    assert response.status_code == 302
    assert usernames(django_user_model) == ["Dave", "admin"]


def test_a_name_that_shows_nothing_is_refused_by_createsuperuser(django_user_model):
    """A Hangul filler is a letter to the user model's validator."""
    with pytest.raises(CommandError, match=r"shows nothing"):
        call_command("createsuperuser", interactive=False, username="\u3164", email="")
    assert usernames(django_user_model) == []


def test_a_name_that_shows_nothing_is_refused_by_the_admin(admin_client, django_user_model):
    response = add_login(admin_client, "\u3164")
    assert "shows nothing" in " ".join(response.context["adminform"].form.errors["username"])
    assert usernames(django_user_model) == ["admin"]


def typed_at_the_prompt(name: str, meanwhile: Callable[[], object]) -> None:
    """`createsuperuser` at a prompt, `name` typed; `meanwhile` run as the email is asked (the
    name accepted, the login not stored yet)."""

    def answer(message: str) -> str:
        if message.startswith("Email"):
            meanwhile()
            return ""
        return name

    with (
        mock.patch("builtins.input", answer),
        mock.patch("getpass.getpass", lambda prompt="": PASSWORD),
    ):
        call_command("createsuperuser", interactive=True, stdin=Terminal())


def test_a_superuser_whose_look_alike_was_made_while_it_was_typed_is_taken_back(
    django_user_model, capsys
):
    """At a prompt no lock is held: the name is asked again once the login is stored."""
    with pytest.raises(CommandError, match=r"reads as the user 'carol'.* was taken back"):
        typed_at_the_prompt("Carol", lambda: an_agent("carol"))
    assert "created successfully" not in capsys.readouterr().out  # it said so, then took it back
    assert usernames(django_user_model) == ["carol"]


@pytest.mark.django_db(transaction=True)  # the failed insert is in no test's transaction
def test_a_superuser_whose_very_name_was_made_while_it_was_typed_is_refused(
    django_user_model,
):
    """It failed on the unique constraint, with a traceback."""
    with pytest.raises(CommandError, match=r"^Error: 'dave' was made meanwhile"):
        typed_at_the_prompt("dave", lambda: django_user_model.objects.create_user("dave"))
    assert not django_user_model.objects.get(username="dave").is_superuser


def an_administrator(name: str) -> None:
    get_user_model().objects.create_superuser(name, password="their-own-pass-phrase")


@pytest.mark.parametrize(
    ("made", "refusal"),
    [
        (an_agent, r"^dave is an agent's user"),
        # made a curator, its password would have been the one typed for a new login
        (an_administrator, r"^dave was made meanwhile, by another command"),
    ],
    ids=["agent", "administrator"],
)
def test_a_curators_name_taken_meanwhile_is_not_made_a_curator(
    monkeypatch, django_user_model, made, refusal
):
    """The name was no one's when asked; a login of that very name is made before the
    curator's transaction: the login `get_or_create` finds is not made a curator."""
    claim = create_curator.claim_user_name

    def made_meanwhile(name: str) -> None:
        made(name)
        claim(name)

    monkeypatch.setattr(create_curator, "claim_user_name", made_meanwhile)
    with pytest.raises(CommandError, match=refusal):
        call_command("create_curator", "dave", "--password", PASSWORD)
    assert not django_user_model.objects.filter(groups__name="curators").exists()


def test_a_curator_typed_in_fullwidth_letters_is_stored_as_the_login_page_reads_it(
    client, django_user_model
):
    """Django's login form reads "\uff51\uff55\uff49\uff4e\uff4e" as "quinn" (NFKC): stored as
    typed, that curator could never sign in."""
    call_command("create_curator", "\uff51\uff55\uff49\uff4e\uff4e", "--password", PASSWORD)
    assert usernames(django_user_model) == ["quinn"]
    response = client.post(
        "/accounts/login/", {"username": "\uff51\uff55\uff49\uff4e\uff4e", "password": PASSWORD}
    )
    assert response.status_code == 302


def test_a_name_holding_a_character_that_shows_nothing_is_refused_shown(
    admin_client, django_user_model
):
    response = add_login(admin_client, "dave\u3164")  # the form's NFKC makes it U+1160
    errors = " ".join(response.context["adminform"].form.errors["username"])
    assert "'dave\\u1160' holds a character that shows nothing" in errors
    assert usernames(django_user_model) == ["admin"]


def test_agent_keys_refusal_under_the_lock_names_no_option(carol, monkeypatch):
    """The agent is the command's argument: the refusal `issue` makes (when a look-alike was
    made after the command's own check) is said as the command's own would be."""
    monkeypatch.setattr(agent_key, "refuse_an_agent", lambda name: None)
    with pytest.raises(CommandError, match=r"^'Carol' reads as the user 'carol'"):
        call_command("agent_key", "create", "Carol", "--wings", "*", stdout=None)
