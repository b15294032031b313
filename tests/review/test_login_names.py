"""A person's login is held to the rule an agent's name is (`dedup.user_names`): its name must
not read as another user's, wherever it is made or renamed (`create_curator`, `createsuperuser`,
the admin's user forms), and two made at once whose names read alike cannot both be. The audit
log names its actor by name alone: a curator "Carol" beside the agent "carol" read as one."""

from __future__ import annotations

import contextlib
import threading
from unittest import mock

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse

from api.models import ALL_WINGS, AgentKey
from dedup import user_names
from tests.races import race

pytestmark = pytest.mark.django_db

READS_AS_CAROL = r"'Carol' reads as the user 'carol': the audit log would not tell them apart"


@pytest.fixture
def carol():
    """An agent: its rows in the audit log read "carol"."""
    AgentKey.objects.issue(agent="carol", wings=[ALL_WINGS], rights=["read"])


def usernames(django_user_model) -> list[str]:
    return sorted(django_user_model.objects.values_list("username", flat=True))


def test_a_curator_whose_name_reads_as_an_agents_is_refused(carol, django_user_model):
    with pytest.raises(CommandError, match=READS_AS_CAROL):
        call_command("create_curator", "Carol", "--password", "a-long-pass-phrase-1")
    assert usernames(django_user_model) == ["carol"]


def test_a_curator_in_letters_of_two_scripts_is_refused(django_user_model):
    with pytest.raises(CommandError, match=r"mixes the letters of Cyrillic and Latin"):
        call_command("create_curator", "c\u0430rol", "--password", "a-long-pass-phrase-1")
    assert usernames(django_user_model) == []


def test_an_existing_login_made_a_curator_keeps_its_name(django_user_model):
    """The rule is a new name's: "Carol" made before the rule stays, and can be made a curator."""
    django_user_model.objects.create_user("carol")
    django_user_model.objects.create_user("Carol")
    call_command("create_curator", "Carol", "--password", "a-long-pass-phrase-1")
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


def test_createsuperuser_without_input_makes_a_name_no_one_reads_as(carol, django_user_model):
    call_command("createsuperuser", interactive=False, username="dave", email="", stdout=None)
    assert django_user_model.objects.get(username="dave").is_superuser


class Terminal:
    def isatty(self) -> bool:
        return True


def test_createsuperuser_asks_again_for_a_typed_look_alike(carol, django_user_model, capsys):
    answers = iter(["Carol", "dave", ""])  # the name twice, then the email
    with (
        mock.patch("builtins.input", lambda message: next(answers)),
        mock.patch("getpass.getpass", lambda prompt="": "a-long-pass-phrase-1"),
    ):
        call_command("createsuperuser", interactive=True, stdin=Terminal())
    assert "reads as the user 'carol'" in capsys.readouterr().err
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
    AgentKey.objects.issue(agent="strasse", wings=[ALL_WINGS], rights=["read"])
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


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_two_logins_whose_names_read_alike_made_at_once_make_one(monkeypatch, django_user_model):
    """A curator and an administrator, each past the look-alike check in the transaction that
    stores it, wait (up to a second) for the other to be past its own: without the lock both
    were, and both were made. (`create_curator` asks first outside it too, before a prompt.)"""
    checked = threading.Barrier(2, timeout=1)
    refuse = user_names.refuse_a_look_alike

    def refused_then_meeting(name: str, **given) -> None:
        refuse(name, **given)
        if connection.in_atomic_block:
            with contextlib.suppress(threading.BrokenBarrierError):  # the other waits its turn
                checked.wait()

    def making(command: str, *arguments: str, **options: object) -> str:
        try:
            call_command(command, *arguments, stdout=None, **options)
        except CommandError as error:
            return str(error)
        return ""

    with mock.patch.object(user_names, "refuse_a_look_alike", refused_then_meeting):
        answers = race(
            lambda: making("create_curator", "Carol", "--password", "a-long-pass-phrase-1"),
            lambda: making("createsuperuser", interactive=False, username="carol", email=""),
        )
    assert django_user_model.objects.count() == 1
    (refusal,) = [answer for answer in answers if answer]
    assert "reads as the user" in refusal
