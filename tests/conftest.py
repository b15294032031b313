from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.cache import cache
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from api.models import ALL_WINGS, RIGHTS, AgentKey


@pytest.fixture
def dedup_settings(settings):
    """The dedup settings at their documented defaults; tests change what they need."""
    settings.CASTELLAN_DEDUP_ENABLED = True
    settings.CASTELLAN_DEDUP_NEAR_THRESHOLD = 0.9
    settings.CASTELLAN_DEDUP_ENTITY_FUZZY = True
    settings.CASTELLAN_MAX_CONTENT_BYTES = 1024 * 1024
    return settings


@pytest.fixture
def curator(django_user_model):
    """A person in the curators' group, who may decide."""
    user = django_user_model.objects.create_user("cora", password="secret-pass-1")
    group, _ = Group.objects.get_or_create(name="curators")
    group.permissions.add(Permission.objects.get(codename="decide"))
    user.groups.add(group)
    return user


@pytest.fixture
def user(django_user_model):
    """A login without a password, which `agent_client(user.username)` makes an agent's (one
    with a password is a person's: `api.models.agent_condition`)."""
    return django_user_model.objects.create_user("agent-smith")


def agent_client(username: str, wings=(ALL_WINGS,), rights=RIGHTS) -> APIClient:
    """An API client with a new agent key for `username` (made an agent if not one yet)."""
    _, secret = AgentKey.objects.issue(agent=username, wings=wings, rights=rights)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client


class Terminal(io.StringIO):
    """A stream that is a terminal: a stdin for getpass to ask at, a stderr for a progress bar."""

    def isatty(self) -> bool:
        return True


def person_client(user) -> APIClient:
    """An API client with the person's own DRF token (not an agent key): their role's rights.
    The token is made on the first call for the person, and shared by the clients of later ones."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


@pytest.fixture
def api(user, dedup_settings) -> APIClient:
    """An API client authenticated with a real agent key (every wing, every right), as an agent
    would be."""
    return agent_client(user.username)


@pytest.fixture
def anonymous_api(dedup_settings) -> APIClient:
    return APIClient()


@pytest.fixture
def grant():
    def grant(user, codename: str):
        user.user_permissions.add(Permission.objects.get(codename=codename))
        # Permissions are cached on the instance; the API loads the user afresh per request.
        return user

    return grant


@pytest.fixture(autouse=True)
def _forget_room_word_samples():
    """Rooms' common-word samples are kept per process: a test's rooms start without one (ids
    are reused after a rollback)."""
    from dedup.candidates import room_words

    room_words.forget()
    yield
    room_words.forget()


@pytest.fixture
def write_rate(settings):
    """Writes throttled at three a minute, from a clean count."""
    cache.clear()
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"writes": "3/min"},
    }
    yield
    cache.clear()
