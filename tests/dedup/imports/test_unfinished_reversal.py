"""An import that did not finish is reversed too: a failed one loses what it stored before it
failed, a queued or running one stops and writes nothing after the reversal (its worker died, or
a person cancels it), and an import runs once however often its task is delivered."""

import json
import random
import threading
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, connections
from django.utils import timezone

from dedup import imports, services
from dedup.imports import chunks
from dedup.imports import run as run_module
from palace.models import AuditAction, AuditEntry, AuditTarget, Drawer, Import

pytestmark = pytest.mark.django_db


def mempalace_file(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "export.jsonl"
    lines = [
        {
            "id": f"mp-{n}",
            "document": f"Record {n}: the service in region {n} restarts at {n % 24} hours.",
            "metadata": {"wing": "w", "room": "r"},
        }
        for n in range(count)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def file_drawers(count: int) -> int:
    """How many of the file's drawers the store holds."""
    ids = [imports.client_id("mempalace", "w", f"mp-{n}") for n in range(count)]
    return Drawer.objects.filter(uuid__in=ids).count()


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_SIZE", 2)


def fail_at_chunk(monkeypatch, failing: int) -> None:
    """The import's `failing`th chunk fails, as a lost database would make it."""
    keep = chunks.ChunkWriter._keep
    seen = {"chunks": 0}

    def keep_then_fail(self, *args, **kwargs):
        seen["chunks"] += 1
        if seen["chunks"] == failing:
            raise RuntimeError("the database went away")
        return keep(self, *args, **kwargs)

    monkeypatch.setattr(chunks.ChunkWriter, "_keep", keep_then_fail)


def test_a_failed_import_is_reversed(small_chunks, tmp_path, monkeypatch):
    path = mempalace_file(tmp_path, 9)
    fail_at_chunk(monkeypatch, 4)
    imported = imports.import_create(source=str(path), format="mempalace")
    with pytest.raises(RuntimeError):
        imports.import_run(imported, path=path)
    imported.refresh_from_db()
    assert imported.status == Import.Status.FAILED
    # Committed: the first record (it made the room), the rest of its chunk, a chunk of two.
    assert file_drawers(9) == 4
    assert imported.summary["created"] == 4  # what was committed, not the rolled-back chunk
    assert imported.summary["records"] == 4
    reversal = imports.import_reverse(imported=imported)
    assert len(reversal.removed) == 4
    assert file_drawers(9) == 0
    assert Import.objects.get(pk=imported.pk).status == Import.Status.REVERSED
    audit = AuditEntry.objects.get(
        action=AuditAction.IMPORT_REVERSE, target_type=AuditTarget.IMPORT
    )
    assert audit.before == {"status": "failed"}


def test_a_queued_import_reversed_never_runs(tmp_path):
    path = mempalace_file(tmp_path, 3)
    imported = imports.import_create(source=str(path), format="mempalace", upload="{}")
    reversal = imports.import_reverse(imported=imported)
    assert reversal.removed == []
    tally = imports.import_run(imported, path=path)
    assert tally.records == 0
    assert file_drawers(3) == 0
    imported.refresh_from_db()
    assert imported.status == Import.Status.REVERSED
    assert imported.upload == ""
    assert imported.summary["created"] == 0  # the keys a client reads are there
    assert imported.summary["reversal"]["removed"] == []


def test_an_import_reversed_while_it_runs_stops_and_keeps_nothing(small_chunks, tmp_path):
    path = mempalace_file(tmp_path, 10)
    imported = imports.import_create(source=str(path), format="mempalace")
    reversals = []

    def reverse_after_two_chunks(records: int) -> None:
        if records == 4 and not reversals:
            reversals.append(imports.import_reverse(imported=Import.objects.get(pk=imported.pk)))

    tally = imports.import_run(imported, path=path, on_progress=reverse_after_two_chunks)
    assert len(reversals[0].removed) == 4
    assert tally.records < 10
    assert Import.objects.get(pk=imported.pk).summary["created"] == 4  # as it was reversed
    assert file_drawers(10) == 0
    assert Import.objects.get(pk=imported.pk).status == Import.Status.REVERSED
    assert not AuditEntry.objects.filter(action=AuditAction.IMPORT_APPLY).exists()


def test_an_import_runs_once_however_often_its_task_comes(tmp_path):
    path = mempalace_file(tmp_path, 3)
    imported = imports.import_create(source=str(path), format="mempalace")
    first = imports.import_run(imported, path=path)
    again = imports.import_run(Import.objects.get(pk=imported.pk), path=path)
    assert first.created == 3
    assert again.records == 0
    imported.refresh_from_db()
    assert imported.status == Import.Status.DONE
    assert imported.summary["created"] == 3
    assert AuditEntry.objects.filter(action=AuditAction.IMPORT_APPLY).count() == 1


def test_a_mention_on_a_drawer_of_a_format_without_mentions_keeps_it(tmp_path):
    path = mempalace_file(tmp_path, 2)
    imported = imports.import_create(source=str(path), format="mempalace")
    imports.import_run(imported, path=path)
    drawer = Drawer.objects.get(uuid=imports.client_id("mempalace", "w", "mp-0"))
    services.mention_add(drawer=drawer, name="PostgreSQL", kind="technology")
    # Even a mention dated before the import's end is not the import's: MemPalace has none.
    Import.objects.filter(pk=imported.pk).update(finished_at=timezone.now())
    reversal = imports.import_reverse(imported=Import.objects.get(pk=imported.pk))
    assert reversal.kept == [
        {"drawer": str(drawer.uuid), "reasons": ["a mention was recorded on it later"]}
    ]
    assert len(reversal.removed) == 1


def test_an_unfinished_castellan_import_tells_its_own_mentions_from_later_ones(
    tmp_path, monkeypatch
):
    path = tmp_path / "castellan.jsonl"
    lines = [
        {"type": "drawer", "id": "d1", "wing": "w", "room": "r", "content": "Deploys on Tuesday."},
        {"type": "drawer", "id": "d2", "wing": "w", "room": "r", "content": "Backups nightly."},
        {"type": "mention", "drawer": "d1", "name": "PostgreSQL", "kind": "technology"},
        {"type": "mention", "drawer": "d2", "name": "Redis", "kind": "technology"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    own, later = (imports.client_id("castellan", "w", id) for id in ("d1", "d2"))
    apply_other = run_module._apply_other

    def agent_mentions_then_apply(imported, item, *rest):
        if item.data.get("name") == "Redis":  # an agent names the drawer before the import does
            services.mention_add(
                drawer=Drawer.objects.get(uuid=later), name="Redis", kind="technology"
            )
        apply_other(imported, item, *rest)

    monkeypatch.setattr(run_module, "_apply_other", agent_mentions_then_apply)
    monkeypatch.setattr(run_module, "_finish", fail)
    imported = imports.import_create(source=str(path), format="castellan")
    with pytest.raises(RuntimeError):
        imports.import_run(imported, path=path)
    assert Import.objects.get(pk=imported.pk).mentions.count() == 1
    reversal = imports.import_reverse(imported=Import.objects.get(pk=imported.pk))
    assert reversal.removed == [str(own)]
    assert reversal.kept == [
        {"drawer": str(later), "reasons": ["a mention was recorded on it later"]}
    ]


def fail(*_):
    raise RuntimeError("the database went away")


@pytest.mark.parametrize("finished", [True, False])
def test_an_import_made_before_mentions_were_recorded_judges_them_by_time(tmp_path, finished):
    path = tmp_path / "castellan.jsonl"
    line = {"type": "drawer", "id": "d1", "wing": "w", "room": "r", "content": "Deploys."}
    path.write_text(json.dumps(line) + "\n")
    imported = imports.import_create(source=str(path), format="castellan")
    imports.import_run(imported, path=path)
    drawer = Drawer.objects.get(uuid=imports.client_id("castellan", "w", "d1"))
    services.mention_add(drawer=drawer, name="PostgreSQL")  # as the import's own line would
    ended = timezone.now() if finished else None
    Import.objects.filter(pk=imported.pk).update(
        options={"mentions_unrecorded": True}, finished_at=ended
    )
    reversal = imports.import_reverse(imported=Import.objects.get(pk=imported.pk))
    assert len(reversal.removed) == int(finished)
    assert len(reversal.kept) == int(not finished)


def reverse_while_running(
    running: Import, path: Path, progress: int, reversed: Import
) -> tuple[dict[str, object], imports.Reversal]:
    """Run `running` in a worker thread on its own connection and, once it has committed
    `progress` records, reverse `reversed` from this one; the run's tally (or its error), and
    the reversal."""
    outcome: dict[str, object] = {}

    def work() -> None:
        try:
            outcome["tally"] = imports.import_run(running, path=path)
        except Exception as error:  # the caller's assertion names it
            outcome["error"] = error
        finally:
            connections.close_all()

    worker = threading.Thread(target=work)
    worker.start()
    try:
        while Import.objects.get(pk=running.pk).progress < progress:
            assert worker.is_alive(), outcome
        reversal = imports.import_reverse(imported=Import.objects.get(pk=reversed.pk))
    finally:
        worker.join(timeout=120)
    return outcome, reversal


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_a_reversal_racing_a_running_import_leaves_nothing_behind(tmp_path, monkeypatch):
    """The import runs in a worker thread on its own connection; the reversal comes from another
    while chunks are being written. Whatever the interleaving, every chunk is either removed by
    the reversal or never written."""
    monkeypatch.setattr(chunks, "CHUNK_SIZE", 5)
    count = 400
    path = mempalace_file(tmp_path, count)
    imported = imports.import_create(source=str(path), format="mempalace")
    outcome, reversal = reverse_while_running(imported, path, 20, imported)
    assert "error" not in outcome
    assert outcome["tally"].records < count  # it stopped
    assert len(reversal.removed) >= 20
    assert file_drawers(count) == 0
    assert Import.objects.get(pk=imported.pk).status == Import.Status.REVERSED


def test_import_memories_says_an_import_reversed_while_it_ran_stopped(tmp_path, monkeypatch):
    path = mempalace_file(tmp_path, 3)

    def reversed_meanwhile(imported, tally):
        raise chunks.ImportStopped(f"import {imported.pk} is reversed")

    monkeypatch.setattr(run_module, "_finish", reversed_meanwhile)
    with pytest.raises(CommandError, match="was reversed while it ran, and stopped"):
        call_command("import_memories", str(path), "--format", "mempalace", "--no-progress")


def unrelated_texts(count: int) -> list[str]:
    """Texts no two of which are alike: each links only to its own variant."""
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [
        " ".join("".join(rng.choice(letters) for _ in range(7)) for _ in range(8))
        for _ in range(count)
    ]


def texts_file(tmp_path: Path, name: str, texts: list[tuple[str, str]]) -> Path:
    path = tmp_path / f"{name}.jsonl"
    lines = [
        {"id": id, "document": text, "metadata": {"wing": "w", "room": "r"}} for id, text in texts
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
def test_a_reversal_and_another_import_linking_to_its_drawers_never_deadlock(tmp_path, monkeypatch):
    """The other import's chunk holds the reversed import's drawers as it links to them, in its
    own order (here the reverse of theirs); the reversal waits for the chunk's rooms first."""
    monkeypatch.setattr(chunks, "CHUNK_SIZE", 50)
    count = 300
    texts = unrelated_texts(count)
    originals = [(f"o-{n}", text) for n, text in enumerate(texts)]
    variants = [(f"v-{n}", text + "z") for n, text in reversed(list(enumerate(texts)))]
    first = imports.import_create(source="first", format="mempalace")
    imports.import_run(first, path=texts_file(tmp_path, "originals", originals))
    variants_path = texts_file(tmp_path, "variants", variants)
    second = imports.import_create(source="second", format="mempalace")
    outcome, reversal = reverse_while_running(second, variants_path, 50, first)
    assert "error" not in outcome
    assert Import.objects.get(pk=second.pk).status == Import.Status.DONE
    assert len(reversal.removed) + len(reversal.kept) == count
    assert len(reversal.kept) >= 50  # the variants written before it link to their originals


def test_the_admin_shows_an_imports_mentions_as_a_count_and_reverses_it_running(
    admin_client, tmp_path
):
    path = tmp_path / "castellan.jsonl"
    lines = [
        {"type": "drawer", "id": "d1", "wing": "w", "room": "r", "content": "Deploys on Tuesday."},
        {"type": "mention", "drawer": "d1", "name": "PostgreSQL", "kind": "technology"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    imported = imports.import_create(source=str(path), format="castellan")
    imports.import_run(imported, path=path)
    page = admin_client.get(f"/admin/palace/import/{imported.pk}/change/")
    assert page.status_code == 200
    assert b"Mentions recorded:" in page.content
    assert b">Mentions:<" not in page.content  # not every mention, listed
    Import.objects.filter(pk=imported.pk).update(status=Import.Status.RUNNING)  # its worker died
    answer = admin_client.post(
        "/admin/palace/import/",
        {"action": "reverse", "_selected_action": [imported.pk]},
        follow=True,
    )
    assert b"1 drawers removed, 0 kept" in answer.content
    assert Import.objects.get(pk=imported.pk).status == Import.Status.REVERSED


def test_a_reversal_removes_the_mentions_it_recorded_on_drawers_stored_before(tmp_path):
    first = tmp_path / "first.jsonl"
    drawer = {"type": "drawer", "id": "d1", "wing": "w", "room": "r", "content": "Deploys."}
    first.write_text(json.dumps(drawer) + "\n")
    earlier = imports.import_create(source="first", format="castellan")
    imports.import_run(earlier, path=first)
    second = tmp_path / "second.jsonl"
    mention = {"type": "mention", "drawer": "d1", "name": "PostgreSQL", "kind": "technology"}
    second.write_text(json.dumps(drawer) + "\n" + json.dumps(mention) + "\n")
    later = imports.import_create(source="second", format="castellan")
    imports.import_run(later, path=second)
    stored = Drawer.objects.get(uuid=imports.client_id("castellan", "w", "d1"))
    assert stored.mentions.count() == 1
    reversal = imports.import_reverse(imported=Import.objects.get(pk=later.pk))
    assert reversal.removed == []
    assert [m["entity"] for m in reversal.mentions_removed] == ["PostgreSQL"]
    assert stored.mentions.count() == 0
    audit = AuditEntry.objects.get(action=AuditAction.IMPORT_REVERSE, target_id=str(later.pk))
    assert audit.data["mentions_removed"][0]["drawer"] == str(stored.uuid)
    # The earlier import's drawer now holds no mention: it is removed, not kept.
    assert imports.import_reverse(imported=earlier).removed == [str(stored.uuid)]
