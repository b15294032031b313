"""Single-key shortcuts can be turned off (WCAG 2.1.4), per user and across sessions; and the
flash messages are valid markup (issue 13, capability 14)."""

import pytest
from django.test import Client

from review.models import ConsolePreferences

pytestmark = pytest.mark.django_db


def turn(client, enabled: str, next_url: str = "/audit/"):
    return client.post(
        "/preferences/shortcuts", {"single_key_shortcuts": enabled, "next": next_url}
    )


def test_shortcuts_are_on_by_default(client, curator):
    client.force_login(curator)
    body = client.get("/").content.decode()
    assert 'data-single-keys="on"' in body
    assert "Turn single-key shortcuts off" in body


def test_turning_shortcuts_off_is_stored_and_shown(client, curator):
    client.force_login(curator)
    response = turn(client, "0")
    assert response.status_code == 302
    assert response["Location"] == "/audit/"
    assert ConsolePreferences.objects.get(user=curator).single_key_shortcuts is False
    body = client.get("/").content.decode()
    assert 'data-single-keys="off"' in body
    assert "Turn single-key shortcuts on" in body


def test_the_setting_outlives_the_session(client, curator):
    client.force_login(curator)
    turn(client, "0")
    again = Client()
    assert again.login(username="cora", password="secret-pass-1")
    assert 'data-single-keys="off"' in again.get("/").content.decode()


def test_turning_them_back_on(client, curator):
    client.force_login(curator)
    turn(client, "0")
    turn(client, "1")
    assert ConsolePreferences.objects.get(user=curator).single_key_shortcuts is True
    assert 'data-single-keys="on"' in client.get("/").content.decode()


def test_a_foreign_next_is_not_followed(client, curator):
    client.force_login(curator)
    assert turn(client, "0", next_url="https://evil.example/")["Location"] == "/"


def test_anonymous_cannot_change_a_setting(client):
    response = turn(client, "0")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert not ConsolePreferences.objects.exists()


def test_the_keys_dialog_offers_the_toggle(client, curator):
    client.force_login(curator)
    body = client.get("/").content.decode()
    dialog = body[body.index('<dialog id="keys"') : body.index("</dialog>")]
    assert 'action="/preferences/shortcuts"' in dialog


def test_flash_messages_are_a_plain_list_inside_a_status_region(client, curator, drawer_link):
    client.force_login(curator)
    client.post(f"/items/d{drawer_link.pk}/decide", {"action": "dismiss"})
    body = client.get("/").content.decode()
    assert '<div role="status"><ul class="messages">' in body
    assert '<ul class="messages" role=' not in body  # a list keeps its list role (axe: listitem)


@pytest.mark.parametrize("value", ["maybe", "", "on", "2"])
def test_a_value_other_than_one_or_zero_is_refused_not_taken_for_off(as_curator, curator, value):
    """A curator's trial: `single_key_shortcuts=maybe` turned them off, unsaid."""
    response = as_curator.post("/preferences/shortcuts", {"single_key_shortcuts": value})
    assert response.status_code == 400
    assert "must be 1 (on) or 0 (off)" in response.content.decode()
    assert not ConsolePreferences.objects.filter(user=curator, single_key_shortcuts=False).exists()


def test_a_change_is_said(as_curator):
    response = as_curator.post("/preferences/shortcuts", {"single_key_shortcuts": "0"})
    assert "Single-key shortcuts are off." in as_curator.get(response["Location"]).content.decode()
