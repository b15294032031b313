"""Commands given odd arguments end with a clear message (CommandError), never a traceback, and
change nothing."""

from __future__ import annotations

import getpass
import io
import json
import sqlite3
import sys
from pathlib import Path

import psycopg
import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import OperationalError, connection

from api.models import AgentKey
from dedup import imports, services
from dedup.imports import chunks
from palace.models import Drawer, DrawerLink, Import
from review.curators import GROUP
from review.models import Proposal, SweepRun
from review.services import sweeps
from tests.conftest import Terminal

pytestmark = pytest.mark.django_db


def test_reversing_a_sweep_with_nothing_applied(dedup_settings):
    run = sweeps.execute(sweeps.start(threshold=0.9))
    with pytest.raises(CommandError, match="Nothing of this sweep is applied"):
        call_command("sweep_reverse", str(run.pk))


@pytest.mark.parametrize(
    ("tiers", "message"),
    [
        (["bogus"], "a drawer sweep has no tier bogus; its tiers are exact, normalized, near"),
        (["typo"], "a drawer sweep has no tier typo"),  # an entity sweep's
        ([], "name at least one of"),
    ],
    ids=["unknown", "of the other kind", "none"],
)
def test_applying_a_sweep_in_tiers_that_are_none_changes_nothing(dedup_settings, tiers, message):
    room = services.room_get_or_create(wing="ops", room="dev")
    off = services.DedupConfig(enabled=False, near_threshold=0.9, entity_fuzzy=False)
    for _ in range(2):  # an exact pair, written while deduplication was off
        services.drawer_write(
            room=room, content="Rotate the tokens daily.", mode=services.WriteMode.MINED, config=off
        )
    run = sweeps.execute(sweeps.start(threshold=0.9))
    with pytest.raises(CommandError, match=message):
        call_command("sweep_apply", str(run.pk), "--threshold", "0.7", "--tiers", *tiers)
    assert run.proposals.filter(status=Proposal.Status.PROPOSED).count() == 1
    assert not DrawerLink.objects.exists()


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [("--wing", "", "wing must not be blank"), ("--room", "", "room must not be blank")],
    ids=["wing", "room"],
)
def test_a_sweep_of_a_blank_wing_or_room_is_refused(dedup_settings, option, value, message):
    services.room_get_or_create(wing="ops", room="dev")
    arguments = {"--wing": "ops", option: value}
    with pytest.raises(CommandError, match=f"^{message}"):
        call_command("dedup_sweep", *[part for pair in arguments.items() for part in pair])
    assert not SweepRun.objects.exists()


def test_an_entity_sweep_naming_a_wing_is_refused(dedup_settings):
    services.room_get_or_create(wing="ops", room="dev")
    with pytest.raises(CommandError, match="entities belong to no wing"):
        call_command("dedup_sweep", "--entities", "--wing", "ops")
    assert not SweepRun.objects.exists()


@pytest.mark.parametrize("out", ["/nonexistent/directory/out.jsonl", "/dev/full"])
def test_exporting_where_nothing_can_be_written(dedup_settings, out):
    room = services.room_get_or_create(wing="ops", room="dev")
    services.drawer_write(room=room, content="Rotate the API tokens of departed agents daily.")
    with pytest.raises(CommandError, match="cannot write"):
        call_command("export_memories", out)


def test_an_export_that_cannot_be_written_is_closed_before_the_command_ends(
    dedup_settings, monkeypatch
):
    """Closed then, its database cursor is closed while the connection is open; collected
    later, after the connection is closed, it printed a traceback below the one-line error."""
    closed = []

    def lines(**options):
        try:
            while True:
                yield "x" * 1000 + "\n"
        finally:
            closed.append(True)

    monkeypatch.setattr(imports, "export_lines", lines)
    try:
        call_command("export_memories", "/dev/full")
    except CommandError as error:  # while the error is held, as the command line holds it
        message, closed_by_then = str(error), list(closed)
    assert message.startswith("cannot write /dev/full")
    assert closed_by_then == [True]


@pytest.mark.parametrize(
    ("wing", "message"),
    [("nosuchwing", "No wing nosuchwing."), ("", "wing must not be blank"), (" ", "blank")],
    ids=["no such wing", "empty", "blank"],
)
def test_exporting_a_wing_that_is_none_writes_nothing(dedup_settings, tmp_path, wing, message):
    services.room_get_or_create(wing="ops", room="dev")
    out = tmp_path / "out.jsonl"
    with pytest.raises(CommandError, match=message):
        call_command("export_memories", str(out), "--wing", wing)
    assert not out.exists()


def test_exporting_to_dash_writes_to_standard_output(dedup_settings, tmp_path, monkeypatch):
    room = services.room_get_or_create(wing="ops", room="dev")
    services.drawer_write(room=room, content="Rotate the API tokens of departed agents daily.")
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    call_command("export_memories", "-", "--wing", "ops", stdout=out, stderr=err)
    drawer = json.loads(out.getvalue().splitlines()[0])
    assert drawer["content"] == "Rotate the API tokens of departed agents daily."
    assert err.getvalue() == "1 lines written to -\n"
    assert not (tmp_path / "-").exists()


UNREADABLE = "/proc/self/mem"  # there, but reading its first byte fails (EIO)
on_linux = pytest.mark.skipif(not Path(UNREADABLE).exists(), reason="needs Linux's /proc")


@on_linux
@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]], ids=["import", "dry run"])
def test_importing_a_file_that_cannot_be_read_records_nothing(dedup_settings, dry_run):
    with pytest.raises(CommandError, match=f"^cannot read {UNREADABLE}: Input/output error$"):
        call_command("import_memories", UNREADABLE, "--format", "jsonl", *dry_run)
    assert not Import.objects.exists()


@on_linux
def test_a_file_failing_part_way_ends_the_import_failed_naming_it(dedup_settings, monkeypatch):
    monkeypatch.setattr(imports, "check_readable", lambda path, format: None)  # as if it broke
    monkeypatch.setattr(imports, "record_wings", lambda path, **options: set())  # and again
    with pytest.raises(CommandError, match=f"^cannot read {UNREADABLE}: .*; import [0-9]+ failed"):
        call_command("import_memories", UNREADABLE, "--format", "jsonl", "--no-progress")
    assert Import.objects.get().status == Import.Status.FAILED


@pytest.mark.parametrize(
    ("wing", "message"),
    [
        ("", "wing must not be blank"),
        ("   ", "wing must not be blank"),
        ("w" * 101, "wing must be at most 100"),
    ],
    ids=["empty", "spaces", "long"],
)
def test_an_import_into_a_wing_that_cannot_be_one_is_refused_once(
    dedup_settings, tmp_path, wing, message
):
    source = tmp_path / "memories.jsonl"
    source.write_text('{"id": "1", "content": "Rotate the tokens daily.", "wing": "ops"}\n')
    with pytest.raises(CommandError, match=f"^{message}"):
        call_command("import_memories", str(source), "--format", "jsonl", "--wing", wing)
    assert not Import.objects.exists()
    assert not Drawer.objects.exists()


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
        ["agent-1", "--wings", "*", "--expires", ""],  # had made a key that never expires
    ],
    ids=[
        "20 digits",
        "5,000 digits",
        "unicode digit",
        "300 chars",
        "empty",
        "control",
        "name",
        "empty expiry",
    ],
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


def test_a_new_curator_without_a_terminal_is_refused_and_nothing_is_made(
    dedup_settings, monkeypatch
):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # as `< /dev/null`, under cron
    with pytest.raises(CommandError, match="needs a password: give --password"):
        call_command("create_curator", "ann")
    assert not get_user_model().objects.exists()


@pytest.mark.parametrize("failure", [EOFError, KeyboardInterrupt])
def test_a_password_prompt_left_unanswered_makes_nothing(dedup_settings, monkeypatch, failure):
    monkeypatch.setattr("sys.stdin", Terminal())

    def unanswered(prompt: str) -> str:
        raise failure

    monkeypatch.setattr(getpass, "getpass", unanswered)
    with pytest.raises(CommandError, match="No password given"):
        call_command("create_curator", "ann")
    assert not get_user_model().objects.exists()


def test_a_password_typed_twice_differently_makes_nothing(dedup_settings, monkeypatch):
    monkeypatch.setattr("sys.stdin", Terminal())
    answers = iter(["secret-pass-1", "secret-pass-2"])
    monkeypatch.setattr(getpass, "getpass", lambda prompt: next(answers))
    with pytest.raises(CommandError, match="The passwords differ"):
        call_command("create_curator", "ann")
    assert not get_user_model().objects.exists()


def test_a_password_typed_at_the_terminal_is_set(dedup_settings, monkeypatch):
    monkeypatch.setattr("sys.stdin", Terminal())
    monkeypatch.setattr(getpass, "getpass", lambda prompt: "secret-pass-1")
    call_command("create_curator", "ann", stdout=io.StringIO())
    assert get_user_model().objects.get().check_password("secret-pass-1")


def test_a_password_given_for_an_existing_curator_is_set(dedup_settings):
    call_command("create_curator", "alice", "--password", "secret-pass-1")
    out = io.StringIO()
    call_command("create_curator", "alice", "--password", "other-pass-2", stdout=out)
    alice = get_user_model().objects.get()
    assert alice.check_password("other-pass-2")
    assert "password set" in out.getvalue()


def test_an_existing_curator_keeps_the_password_when_none_is_given(dedup_settings):
    call_command("create_curator", "alice", "--password", "secret-pass-1")
    call_command("create_curator", "alice", "--staff", stdout=io.StringIO())
    alice = get_user_model().objects.get()
    assert alice.check_password("secret-pass-1")
    assert alice.is_staff


@pytest.mark.parametrize(
    ("password", "reason"),
    [
        ("", "needs a password"),
        ("short1", "too short"),
        ("password123", "too common"),
        ("73915824", "entirely numeric"),
        ("alice-curator", "too similar to the username"),
    ],
    ids=["empty", "short", "common", "numeric", "like the name"],
)
def test_a_weak_password_is_refused_with_the_validators_reason(dedup_settings, password, reason):
    with pytest.raises(CommandError, match=reason):
        call_command("create_curator", "alice-curator", "--password", password)
    assert not get_user_model().objects.exists()


def test_a_weak_password_for_an_existing_curator_changes_nothing(dedup_settings):
    call_command("create_curator", "alice", "--password", "secret-pass-1")
    with pytest.raises(CommandError, match="too short"):
        call_command("create_curator", "alice", "--password", "short1", "--staff")
    alice = get_user_model().objects.get()
    assert alice.check_password("secret-pass-1")
    assert not alice.is_staff


def test_an_agent_is_not_made_a_curator(dedup_settings):
    call_command("agent_key", "create", "bob", "--wings", "*", stdout=io.StringIO())
    with pytest.raises(CommandError, match="bob is an agent's user"):
        call_command("create_curator", "bob", "--staff", "--password", "secret-pass-1")
    bob = get_user_model().objects.get()
    assert not bob.is_staff
    assert not bob.has_usable_password()
    assert not bob.groups.filter(name=GROUP).exists()


@pytest.mark.parametrize("port", ["99999", "-1", "0"])
def test_the_mcp_server_refuses_a_port_that_is_none(port):
    with pytest.raises(CommandError, match="port"):
        call_command("mcp_server", "--transport", "http", "--port", port)


def hold_sqlite_write_lock() -> sqlite3.Connection:
    """Another connection holding SQLite's write lock, as a busy writer would."""
    name = connection.settings_dict["NAME"]
    holder = sqlite3.connect(name, uri=name.startswith("file:"), timeout=0)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("UPDATE django_session SET expire_date = expire_date")
    return holder


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's write lock")
@pytest.mark.parametrize(
    "command",
    [
        ["import_reverse", "{import_id}"],
        ["mine", "{directory}", "--wing", "ops"],
        ["create_curator", "ann", "--password", "secret-pass-1"],
        ["agent_key", "create", "scout", "--wings", "*"],
    ],
    ids=["import_reverse", "mine", "create_curator", "agent_key"],
)
def test_a_busy_database_ends_a_command_with_one_line(dedup_settings, tmp_path, command):
    (tmp_path / "notes.md").write_text("Rotate the API tokens of departed agents daily.\n")
    imported = imports.import_create(source="notes.jsonl", format="castellan")
    arguments = [part.format(import_id=imported.pk, directory=tmp_path) for part in command]
    holder = hold_sqlite_write_lock()
    try:
        with pytest.raises(CommandError, match=r"^The database is busy; retry shortly\."):
            call_command(*arguments)
    finally:
        holder.rollback()
        holder.close()
    assert Import.objects.get(pk=imported.pk).status == Import.Status.QUEUED
    assert not Drawer.objects.exists()
    assert not AgentKey.objects.exists()
    assert not get_user_model().objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="kills a PostgreSQL backend")
def test_a_lost_database_ends_a_command_with_one_line(dedup_settings):
    imported = imports.import_create(source="notes.jsonl", format="castellan")
    params = connection.get_connection_params()
    with psycopg.connect(**{k: v for k, v in params.items() if k != "cursor_factory"}) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [connection.connection.info.backend_pid])
    with pytest.raises(CommandError, match=r"^The database is unavailable; retry shortly\."):
        call_command("import_reverse", str(imported.pk))
    connection.close()
    assert Import.objects.get(pk=imported.pk).status == Import.Status.QUEUED


@pytest.mark.parametrize("password", ["pw-secret-1", None], ids=["password", "single sign-on"])
def test_a_persons_login_is_not_made_an_agent(dedup_settings, django_user_model, password):
    """In the agents' group a viewer could write and delete: the command refuses."""
    django_user_model.objects.create_user("vic", password=password)
    with pytest.raises(CommandError, match="vic is a person's login"):
        call_command("agent_key", "create", "vic", "--wings", "*")
    assert not AgentKey.objects.exists()
    assert not django_user_model.objects.get(username="vic").groups.exists()


def test_an_agents_next_key_is_minted(dedup_settings):
    call_command("agent_key", "create", "scout", "--wings", "*")
    call_command("agent_key", "create", "scout", "--wings", "ops")
    assert AgentKey.objects.filter(user__username="scout").count() == 2


def test_a_key_that_expires_at_once_is_refused(dedup_settings):
    with pytest.raises(CommandError, match="--expires 0"):
        call_command("agent_key", "create", "scout", "--wings", "*", "--expires", "0d")
    assert not AgentKey.objects.exists()


def test_revoking_a_key_twice_says_so(dedup_settings, capsys):
    key, _ = AgentKey.objects.issue(agent="scout", wings=["*"], rights=["read"])
    call_command("agent_key", "revoke", key.prefix)
    call_command("agent_key", "revoke", key.prefix)
    assert capsys.readouterr().out.splitlines() == [
        f"Revoked agent key {key.prefix}.",
        f"Agent key {key.prefix} was revoked already.",
    ]


def test_an_import_the_database_stops_part_way_is_named(dedup_settings, tmp_path, monkeypatch):
    path = tmp_path / "notes.jsonl"
    path.write_text("".join(f'{{"uid": "n{n}", "text": "Fact number {n}."}}\n' for n in range(3)))
    monkeypatch.setattr(chunks, "CHUNK_SIZE", 1)
    commit = chunks.ChunkWriter._commit

    def busy_after_one(writer, records):
        if Drawer.objects.exists():
            error = OperationalError("database is locked")
            error.__cause__ = sqlite3.OperationalError("database is locked")
            raise error
        commit(writer, records)

    monkeypatch.setattr(chunks.ChunkWriter, "_commit", busy_after_one)
    with pytest.raises(CommandError, match=r"^The database is busy; .*; import ([0-9]+) failed: "):
        call_command(
            "import_memories", str(path), "--format", "jsonl", "--wing", "ops",
            "--map", "id=uid", "--map", "content=text", "--no-progress",
        )  # fmt: skip
    imported = Import.objects.get()
    assert imported.status == Import.Status.FAILED
    assert Drawer.objects.count() == 1  # the chunk committed before stays, reversible


@pytest.mark.parametrize(("option", "shown"), [([], True), (["--no-progress"], False)])
def test_an_export_shows_its_progress_on_a_terminal(
    dedup_settings, tmp_path, monkeypatch, option, shown
):
    room = services.room_get_or_create(wing="ops", room="dev")
    services.drawer_write(room=room, content="Rotate the API tokens of departed agents daily.")
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    call_command("export_memories", str(tmp_path / "out.jsonl"), *option)
    assert ("exporting: " in terminal.getvalue()) is shown
