"""What a worker runs is named in its log (db_worker's own lines name only a task's id): the
sweep, its parts, the import and how each ended."""

import logging

import pytest

from dedup import services as write
from dedup.tasks import run_import
from palace.models import Import
from review.services import sweeps
from review.tasks import run_sweep
from tests.review.sweep_data import legacy

pytestmark = pytest.mark.django_db


def test_a_sweeps_parts_are_named(dedup_settings, caplog):
    write.drawer_write_in(wing="ops", room="r", content="The backups run nightly at two.")
    run = sweeps.start(wing="ops", threshold=0.9)
    with caplog.at_level(logging.INFO, logger="castellan.sweeps"):
        run_sweep.enqueue(run.pk)
    lines = [r.getMessage() for r in caplog.records if r.name == "castellan.sweeps"]
    part = run.parts.get().pk
    assert f"sweep {run.pk}: 1 part(s) queued" in lines
    assert f"sweep part {part}: started" in lines
    assert f"sweep part {part}: done; sweep {run.pk} done" in lines
    # What it found, even nothing (the line said "done: {}").
    assert f"sweep {run.pk} done: 0 proposals; 1 drawer read, 0 pairs compared" in lines


def test_a_finished_sweep_says_what_it_found(dedup_settings, caplog):
    room = write.room_get_or_create(wing="ops", room="r")
    for _ in range(3):
        legacy(room, "The backups run nightly at two in the morning.")
    run = sweeps.start(wing="ops", threshold=0.9)
    with caplog.at_level(logging.INFO, logger="castellan.sweeps"):
        run_sweep.enqueue(run.pk)
    lines = [r.getMessage() for r in caplog.records if r.name == "castellan.sweeps"]
    assert f"sweep {run.pk} done: 3 proposals (exact 3); 3 drawers read, 3 pairs compared" in lines


def test_an_import_is_named_with_its_outcome(dedup_settings, caplog):
    imported = Import.objects.create(
        source="upload",
        format="mempalace",
        upload='{"id": "1", "document": "Hello there, team.", "metadata": {"wing": "ops"}}\n',
    )
    with caplog.at_level(logging.INFO, logger="castellan.imports"):
        run_import.enqueue(imported.pk)
    lines = [r.getMessage() for r in caplog.records if r.name == "castellan.imports"]
    assert lines[0] == f"import {imported.pk}: started (mempalace, upload)"
    assert lines[-1].startswith(f"import {imported.pk}: ended: {{'files': 1, 'records': 1")
