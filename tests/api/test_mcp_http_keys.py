"""Over HTTP every request signs in, as every REST route does: `initialize`, the lists and a
notification with a bogus, revoked or expired key are refused 401 with the REST API's body, as a
tool call was already, rather than answered in full (a wrong key learns nothing, and a client
learns at its first request that its key is wrong). Over stdio the key is the environment's, read
by each call (test_mcp.py)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from api.models import ALL_WINGS, RIGHTS, AgentKey
from tests.api.test_mcp_wire import INITIALIZE, post

# The key is read on a worker thread, with a connection of its own: it must be committed.
pytestmark = pytest.mark.django_db(transaction=True)

DISCOVERY = [
    INITIALIZE,
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "resources/list"},
    {"jsonrpc": "2.0", "id": 4, "method": "resources/templates/list"},
    {"jsonrpc": "2.0", "id": 5, "method": "prompts/list"},
    {"jsonrpc": "2.0", "id": 6, "method": "ping"},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]
IDS = [message["method"] for message in DISCOVERY]


@pytest.fixture(autouse=True)
def hosts(settings) -> None:
    settings.ALLOWED_HOSTS = ["127.0.0.1"]


def key(state: str) -> str:
    """A key that does not sign in: never issued, revoked, or past its expiry."""
    if state == "bogus":
        return "nope.not-a-key"
    expires_at = timezone.now() - timedelta(minutes=1) if state == "expired" else None
    issued, secret = AgentKey.objects.issue(
        agent="agent-a", wings=(ALL_WINGS,), rights=RIGHTS, expires_at=expires_at
    )
    if state == "revoked":
        issued.revoked = True
        issued.save()
    return secret


@pytest.mark.parametrize("state", ["bogus", "revoked", "expired"])
@pytest.mark.parametrize("message", DISCOVERY, ids=IDS)
def test_every_request_with_a_bad_key_is_refused(state, message) -> None:
    status, content = post(json.dumps(message).encode(), f"Bearer {key(state)}")
    assert status == 401
    assert json.loads(content)["code"] == "authentication_failed"


@pytest.mark.parametrize("message", DISCOVERY[:-1], ids=IDS[:-1])
def test_a_good_key_is_answered(message) -> None:
    status, content = post(json.dumps(message).encode(), f"Bearer {key('good')}")
    assert status == 200
    assert "result" in json.loads(content)


def test_a_bad_key_is_refused_before_the_body_is_read() -> None:
    status, content = post(b"not json", "Bearer nope.not-a-key")
    assert status == 401
    assert json.loads(content)["code"] == "authentication_failed"


@pytest.mark.parametrize("host", [b"evil.example", b"evil.example:8000", b"", b"127.0.0.1@evil"])
def test_a_host_outside_allowed_hosts_is_refused_as_rest_refuses_it(host) -> None:
    """400 with the API's JSON body, before the key is read (the SDK's check answered 421 in
    plain text, which its own client reports only as "an error response")."""
    status, content = post(json.dumps(INITIALIZE).encode(), f"Bearer {key('good')}", host=host)
    assert status == 400
    assert json.loads(content)["code"] == "invalid"


@pytest.mark.parametrize(
    "host", [b"127.0.0.1:8312", b"mcp.example.org", b"MCP.Example.org:443", b"example.org."]
)
def test_a_host_allowed_hosts_allows_by_django_s_rule_is_answered(settings, host) -> None:
    """`.example.org` covers its subdomains, and case and a trailing dot do not count, as for
    the REST API (the SDK's own check answered those 421)."""
    settings.ALLOWED_HOSTS = ["127.0.0.1", ".example.org"]
    status, _ = post(json.dumps(INITIALIZE).encode(), f"Bearer {key('good')}", host)
    assert status == 200


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        (b"https://evil.example", 403),
        (b"null", 403),
        (b"http://127.0.0.1:8312", 200),
        (None, 200),  # a client that is no browser
    ],
)
def test_a_browser_s_origin_must_be_an_allowed_host(origin, status) -> None:
    message = json.dumps(INITIALIZE).encode()
    answered, content = post(message, f"Bearer {key('good')}", origin=origin)
    assert answered == status
    if status == 403:
        assert json.loads(content)["code"] == "permission_denied"
