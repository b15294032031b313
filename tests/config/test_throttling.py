"""Login lockout (django-axes) for the console and the admin, and the API's write throttle per
identity: both refuse with 429 and write nothing."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from api.models import ALL_WINGS, RIGHTS, AgentKey
from palace.models import Drawer
from tests.conftest import person_client

pytestmark = pytest.mark.django_db

URL = "/api/wings/notes/rooms/entries/drawers"


@pytest.fixture
def lockout(settings):
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 10
    return settings


@pytest.fixture
def person(django_user_model):
    """A person's login (an agent's has no password)."""
    return django_user_model.objects.create_user("pat", password="secret-pass-1")


def log_in(client, url: str, password: str):
    return client.post(url, {"username": "pat", "password": password})


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_thirty_wrong_passwords_lock_the_login_out(client, person, lockout, url):
    answers = [log_in(client, url, f"wrong-{n}").status_code for n in range(30)]
    assert answers[0] == 200  # the form again, with its error
    assert answers[-1] == 429
    assert answers.count(429) == 30 - 10 + 1  # from the limit on


def test_a_locked_out_login_is_refused_even_with_the_right_password(client, person, lockout):
    for n in range(10):
        log_in(client, "/accounts/login/", f"wrong-{n}")
    response = log_in(client, "/accounts/login/", "secret-pass-1")
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_the_right_password_below_the_limit_logs_in(client, person, lockout):
    for n in range(9):
        log_in(client, "/accounts/login/", f"wrong-{n}")
    assert log_in(client, "/accounts/login/", "secret-pass-1").status_code == 302


def write(api, n: int):
    return api.post(URL, {"content": f"Memory number {n} about the storage engine."}, format="json")


def test_writes_over_the_rate_are_throttled_with_retry_after(api, write_rate):
    assert [write(api, n).status_code for n in range(3)] == [201, 201, 201]
    response = write(api, 3)
    assert response.status_code == 429
    assert response.json()["code"] == "throttled"
    assert 0 < int(response["Retry-After"]) <= 60
    assert Drawer.objects.count() == 3


def test_reads_are_not_throttled(api, write_rate):
    for n in range(3):
        write(api, n)
    assert api.get(URL).status_code == 200
    assert write(api, 3).status_code == 429


def test_each_identity_has_its_own_allowance(api, write_rate):
    for n in range(4):
        write(api, n)
    _, secret = AgentKey.objects.issue(agent="agent-jones", wings=(ALL_WINGS,), rights=RIGHTS)
    other_api = APIClient()
    other_api.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    assert write(other_api, 10).status_code == 201


def test_a_session_and_a_token_of_one_person_share_the_allowance(write_rate, django_user_model):
    """A person's DRF token is counted by its user (its key is the secret), like their session;
    an agent key is counted by the key (the test above)."""
    admin = django_user_model.objects.create_superuser("ada", password="secret-pass-3")
    with_token = person_client(admin)
    for n in range(3):
        write(with_token, n)
    session = APIClient()
    session.force_login(admin)
    assert write(session, 3).status_code == 429
