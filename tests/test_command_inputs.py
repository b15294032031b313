"""Commands given odd arguments end with a clear message (CommandError), never a traceback, and
change nothing."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from api.models import AgentKey
from dedup import services
from review.services import sweeps

pytestmark = pytest.mark.django_db


def test_reversing_a_sweep_with_nothing_applied(dedup_settings):
    run = sweeps.execute(sweeps.start(threshold=0.9))
    with pytest.raises(CommandError, match="Nothing of this sweep is applied"):
        call_command("sweep_reverse", str(run.pk))


@pytest.mark.parametrize("out", ["/nonexistent/directory/out.jsonl", "/dev/full"])
def test_exporting_where_nothing_can_be_written(dedup_settings, out):
    room = services.room_get_or_create(wing="ops", room="dev")
    services.drawer_write(room=room, content="Rotate the API tokens of departed agents daily.")
    with pytest.raises(CommandError, match="cannot write"):
        call_command("export_memories", out)


@pytest.mark.parametrize(
    "arguments",
    [
        ["agent-1", "--wings", "*", "--expires", "99999999999999999999d"],
        ["agent-1", "--wings", "*", "--expires", "9" * 5000 + "d"],
        ["agent-1", "--wings", "*", "--expires", "\U0001d7d9d"],  # a digit, not an ASCII one
        ["a" * 300, "--wings", "*"],
        ["", "--wings", "*"],
        ["bad\x01name", "--wings", "*"],
        ["agent-1", "--wings", "*", "--name", "n" * 51],
    ],
    ids=["20 digits", "5,000 digits", "unicode digit", "300 chars", "empty", "control", "name"],
)
def test_an_agent_key_of_odd_arguments_is_refused(dedup_settings, arguments):
    with pytest.raises(CommandError):
        call_command("agent_key", "create", *arguments)
    assert not AgentKey.objects.exists()


@pytest.mark.parametrize("username", ["u" * 300, "", "bad\x01name"])
def test_a_curator_of_an_odd_name_is_refused(dedup_settings, username):
    with pytest.raises(CommandError):
        call_command("create_curator", username, "--password", "secret-pass-1")
    assert not get_user_model().objects.exists()


@pytest.mark.parametrize("port", ["99999", "-1", "0"])
def test_the_mcp_server_refuses_a_port_that_is_none(port):
    with pytest.raises(CommandError, match="port"):
        call_command("mcp_server", "--transport", "http", "--port", port)
