"""An import interrupted (Ctrl-C, or SIGTERM from a process manager) rolls back the chunk under
way, is marked failed, and the command says how to go on, instead of a traceback (Ctrl-C) or
nothing at all (SIGTERM), the import left running for good."""

import json
import os
import signal

import pytest
from django.core.management import CommandError, call_command

from dedup.imports import chunks
from palace.models import Drawer, Import

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def memories(tmp_path):
    path = tmp_path / "memories.jsonl"
    lines = [
        {
            "type": "drawer",
            "id": f"m{i}",
            "wing": "w",
            "room": "r",
            "content": f"Fact {i} {i * 7919}.",
        }
        for i in range(3 * chunks.CHUNK_SIZE)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def interrupt_second_chunk(monkeypatch, interrupt):
    """Interrupt once five records of the second chunk are written (in its transaction)."""
    write, calls = chunks.drawer_write, []

    def writing(**kwargs):
        written = write(**kwargs)
        calls.append(1)
        if len(calls) == chunks.CHUNK_SIZE + 5:
            interrupt()
        return written

    monkeypatch.setattr(chunks, "drawer_write", writing)


def raise_interrupt():
    raise KeyboardInterrupt


def send_sigterm():
    os.kill(os.getpid(), signal.SIGTERM)


@pytest.mark.parametrize("interrupt", [raise_interrupt, send_sigterm], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_import_is_failed_and_says_how_to_go_on(monkeypatch, memories, interrupt):
    interrupt_second_chunk(monkeypatch, interrupt)
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(CommandError) as stopped:
        call_command("import_memories", str(memories), "--format", "castellan", "--no-progress")
    imported = Import.objects.get()
    assert str(stopped.value) == (
        f"Interrupted; import {imported.pk} failed: import the file again to go on (what it "
        f"stored is not stored twice), or remove what it stored with import_reverse "
        f"{imported.pk}."
    )
    assert imported.status == Import.Status.FAILED
    assert Drawer.objects.count() == chunks.CHUNK_SIZE  # the first chunk; the second rolled back
    assert signal.getsignal(signal.SIGTERM) is before
