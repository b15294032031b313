"""A new agent's name must not read as another user's (`dedup.user_names.refuse_a_look_alike`): the
audit log names its actor by name alone, and `agent_key create Carol` (or "c\u0430rol", a
Cyrillic a) beside the curator carol made an agent whose rows read as hers. An agent made
before keeps its name and gets its next key."""

from __future__ import annotations

import contextlib
import threading

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import connection

from api.models import ALL_WINGS, AgentKey
from dedup import user_names
from dedup.look_alikes import letter_scripts, reading_form
from palace.models import AGENTS_GROUP
from review.curators import curators_group
from tests.races import race

pytestmark = pytest.mark.django_db


@pytest.fixture
def carol(django_user_model):
    person = django_user_model.objects.create_user("carol", password="secret-pass-1")
    person.groups.add(curators_group())
    return person


def create(agent: str) -> None:
    call_command("agent_key", "create", agent, "--wings", "*", stdout=None)


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("Carol", r"^'Carol' reads as the user 'carol': the audit log would not tell them apart"),
        ("CAROL", r"^'CAROL' reads as the user 'carol'"),
        ("\uff43arol", r"^carol is a person's login"),  # a fullwidth c: stored as "carol"
        ("c\u0430rol", r"^'c\u0430rol' mixes the letters of Cyrillic and Latin"),
        ("car\u03bfl", r"^'car\u03bfl' mixes the letters of Greek and Latin"),  # a Greek o
    ],
    ids=["capital", "capitals", "fullwidth", "cyrillic a", "greek o"],
)
def test_a_new_agent_that_reads_as_a_user_is_refused(carol, django_user_model, agent, message):
    with pytest.raises(CommandError, match=message):
        create(agent)
    assert not AgentKey.objects.exists()
    assert list(django_user_model.objects.values_list("username", flat=True)) == ["carol"]


def test_a_new_agent_that_reads_as_another_agent_is_refused(django_user_model):
    create("scout")
    with pytest.raises(CommandError, match=r"^'Scout' reads as the user 'scout'"):
        create("Scout")
    assert AgentKey.objects.count() == 1


@pytest.mark.parametrize(
    "agent", ["scout-2", "\u7530\u4e2d\u3055\u3093", "\u0441\u043a\u0430\u0443\u0442"]
)
def test_a_new_agent_of_its_own_name_is_made(carol, agent):
    """Another name; Han with the kana (one script to the rule); a Cyrillic name whole."""
    create(agent)
    assert AgentKey.objects.get().user.username == agent


@pytest.mark.parametrize("agent", ["Carol", "c\u0430rol"])
def test_an_agent_made_before_keeps_its_name(carol, agent, django_user_model):
    """Made before the rule (its login stored as `issue` stores one), it gets its next key:
    the rule is for new names."""
    made = django_user_model.objects.create_user(agent)  # no password: an agent's login
    made.groups.add(Group.objects.get_or_create(name=AGENTS_GROUP)[0])
    create(agent)
    assert AgentKey.objects.filter(user__username=agent).count() == 1


@pytest.mark.parametrize(
    ("name", "form"),
    [
        ("Carol", "carol"),
        ("\uff23AROL", "carol"),
        ("carol\u200d", "carol"),
        ("Stra\u00dfe", "strasse"),
    ],
)
def test_a_names_reading_form(name, form):
    assert reading_form(name) == form


@pytest.mark.parametrize(
    ("name", "scripts"),
    [
        ("agent-1", {"LATIN"}),
        ("c\u0430rol", {"LATIN", "CYRILLIC"}),
        ("\u7530\u4e2d\u3055\u3093", {"CJK"}),
        ("\u5c0f\ud55c", {"CJK"}),
        ("\u02bcscout", {"LATIN"}),  # a modifier letter has no script
        ("2024_", set()),
    ],
)
def test_a_names_letter_scripts(name, scripts):
    assert letter_scripts(name) == scripts


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_two_agents_whose_names_read_alike_made_at_once_make_one(monkeypatch, django_user_model):
    """Each, past the look-alike check, waits (up to a second) for the other to be past its
    own: both were, as neither was stored yet, and `Carol` and `carol` were both made."""
    checked = threading.Barrier(2, timeout=1)
    refuse = user_names.refuse_a_look_alike

    def refused_then_meeting(name: str, **given) -> None:
        refuse(name, **given)
        with contextlib.suppress(threading.BrokenBarrierError):  # the other waits for its turn
            checked.wait()

    monkeypatch.setattr(user_names, "refuse_a_look_alike", refused_then_meeting)

    def making(agent: str) -> list[str]:
        """The refusals of the agent's name (none once made)."""
        try:
            AgentKey.objects.issue(agent=agent, wings=[ALL_WINGS], rights=["read"])
        except ValidationError as error:
            return error.message_dict["agent"]
        return []

    refusals = [
        m for answer in race(lambda: making("Carol"), lambda: making("carol")) for m in answer
    ]
    assert django_user_model.objects.count() == 1
    (refusal,) = refusals
    assert "reads as the user" in refusal
