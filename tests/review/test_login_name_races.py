"""Two logins made at once whose names read alike ("Carol", "carol"), on PostgreSQL with real
threads: one is made, the other refused, whatever makes them (`create_curator`,
`createsuperuser --noinput`, the admin's add form), as each asks the name under one lock on how
it reads (`dedup.user_names.claim_user_name`). Each test makes both pass their checks at once
unless the lock keeps one waiting: the checks meet (each waits up to a second for the other)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from unittest import mock

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from api.management.commands import agent_key
from dedup import user_names
from review.admin import LoginCreationForm
from review.management.commands import create_curator
from tests.races import race

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL"
    ),
]

PASSWORD = "a-long-pass-phrase-1"


@contextlib.contextmanager
def checks_meeting(*, in_transactions_only: bool) -> Iterator[None]:
    """Every look-alike check (or only those made in a transaction) waits, once past, for the
    other's to be past too; one the lock holds back comes after the other's wait gave up. So
    does `agent_key create`'s own check of who the agent may be, made before its transaction."""
    checked = threading.Barrier(2, timeout=1)

    def meeting(check: Callable[..., None], always: bool) -> Callable[..., None]:
        def checked_then_meeting(name: str, **given) -> None:
            check(name, **given)
            if always or connection.in_atomic_block or not in_transactions_only:
                with contextlib.suppress(threading.BrokenBarrierError):
                    checked.wait()

        return checked_then_meeting

    look_alikes = meeting(user_names.refuse_a_look_alike, always=False)
    with (
        mock.patch.object(user_names, "refuse_a_look_alike", look_alikes),
        mock.patch.object(create_curator, "refuse_a_look_alike", look_alikes),
        mock.patch.object(agent_key, "refuse_an_agent", meeting(agent_key.refuse_an_agent, True)),
    ):
        yield


def making(command: str, *arguments: str, **options: object) -> str:
    """The command's refusal ("" once made)."""
    try:
        call_command(command, *arguments, stdout=None, **options)
    except CommandError as error:
        return str(error)
    return ""


def adding(username: str) -> str:
    """The admin's add form for `username`, validated and saved in one transaction as the admin
    does: its refusal ("" once made)."""
    with transaction.atomic():
        form = LoginCreationForm({"username": username, "usable_password": "false"})
        if form.is_valid():
            form.save()
            return ""
    return " ".join(form.errors["username"])


def refused_one(answers: list[str]) -> str:
    (refusal,) = [answer for answer in answers if answer]
    return refusal


def test_a_curator_and_an_administrator(django_user_model):
    """`create_curator` also asks before its transaction (before a prompt): only the checks made
    in a transaction meet, or that first one would meet the administrator's."""
    with checks_meeting(in_transactions_only=True):
        answers = race(
            lambda: making("create_curator", "Carol", "--password", PASSWORD),
            lambda: making("createsuperuser", interactive=False, username="carol", email=""),
        )
    assert django_user_model.objects.count() == 1
    assert "reads as the user" in refused_one(answers)


def test_two_curators(django_user_model):
    with checks_meeting(in_transactions_only=False):
        answers = race(
            lambda: making("create_curator", "Carol", "--password", PASSWORD),
            lambda: making("create_curator", "carol", "--password", PASSWORD),
        )
    assert django_user_model.objects.count() == 1
    assert "reads as the user" in refused_one(answers)


def test_two_adds_in_the_admin(django_user_model):
    with checks_meeting(in_transactions_only=False):
        answers = race(lambda: adding("Stra\u00dfe"), lambda: adding("strasse"))
    assert django_user_model.objects.count() == 1
    assert "reads as the user" in refused_one(answers)


def test_a_curator_and_an_administrator_of_one_name_in_two_widths(django_user_model):
    """Both are stored as "pet1" (NFKC, as Django's forms and `create_user` store a name): one
    is made, the other refused as taken (or made meanwhile), never both side by side."""
    with checks_meeting(in_transactions_only=True):
        answers = race(
            lambda: making("create_curator", "pet1", "--password", PASSWORD),
            lambda: making(
                "createsuperuser", interactive=False, username="\uff50\uff45\uff541", email=""
            ),
        )
    assert list(django_user_model.objects.values_list("username", flat=True)) == ["pet1"]
    assert "already taken" in refused_one(answers) or "made meanwhile" in refused_one(answers)


def test_an_agent_and_an_administrator_of_one_name(django_user_model):
    """The command asks who Dan is while the administrator, under the name's lock, is not made
    yet; its key's transaction then finds the administrator's login, and is refused: it made
    the administrator an agent with a key no route took."""
    with checks_meeting(in_transactions_only=True):
        answers = race(
            lambda: making("agent_key", "create", "Dan", "--wings", "*"),
            lambda: making("createsuperuser", interactive=False, username="Dan", email=""),
        )
    dan = django_user_model.objects.get(username="Dan")
    assert dan.is_superuser
    assert not dan.groups.filter(name="agents").exists()
    assert "Dan is a person's login" in refused_one(answers)


def test_two_administrators_of_one_name(django_user_model):
    """The second is told the name is taken (it once failed on the unique constraint)."""
    with checks_meeting(in_transactions_only=True):
        answers = race(
            lambda: making("createsuperuser", interactive=False, username="zed", email=""),
            lambda: making("createsuperuser", interactive=False, username="zed", email=""),
        )
    assert django_user_model.objects.count() == 1
    assert "already taken" in refused_one(answers)
