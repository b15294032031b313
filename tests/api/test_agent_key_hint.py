"""`agent_key create --unless-active` (a second `make run`) tells how to mint another key with a
command that runs as printed: the interpreter and manage.py this one ran with, the environment
it needed in front (`DEBUG=true` on a development machine, `honcho run` beside a `.env`), and
the wings quoted for the shell."""

import io
import os
import shlex
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def second_create(wings: str = "*") -> str:
    for _ in range(2):
        out = io.StringIO()
        call_command(
            "agent_key",
            "create",
            "scout",
            "--wings",
            wings,
            "--rights",
            "read,write,delete",
            "--unless-active",
            stdout=out,
        )
    return out.getvalue().split("Mint another: ", 1)[1].strip()


def test_on_a_development_machine_the_hint_runs_as_make_run_does(settings, monkeypatch):
    settings.DEBUG = True
    monkeypatch.chdir(ROOT)  # where `make run` runs it; no .env read
    under = Path(sys.executable).is_relative_to(ROOT)
    python = os.path.relpath(sys.executable, ROOT) if under else sys.executable
    assert second_create() == (
        f"DEBUG=true {python} manage.py agent_key create scout --wings '*' "
        "--rights read,write,delete"
    )  # the wings quoted: unquoted, the shell expands `*`


def test_from_elsewhere_the_hint_names_the_paths_whole(settings, tmp_path, monkeypatch):
    settings.DEBUG = True
    monkeypatch.chdir(tmp_path)
    words = shlex.split(second_create())
    assert words[:3] == ["DEBUG=true", sys.executable, str(ROOT / "manage.py")]


def test_beside_a_env_file_the_hint_runs_under_honcho(settings, tmp_path, monkeypatch):
    settings.DEBUG = False
    (tmp_path / ".env").write_text("SECRET_KEY=x\n")
    monkeypatch.chdir(tmp_path)
    words = shlex.split(second_create("ops,notes"))
    assert words[0] == str(Path(sys.executable).parent / "honcho")
    assert words[1] == "run"
    assert words[-6:] == [
        "create",
        "scout",
        "--wings",
        "ops,notes",
        "--rights",
        "read,write,delete",
    ]
