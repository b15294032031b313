"""A long command's progress bar is not drowned by the write path's line a record: at the
default verbosity those lines are left out (the summary counts them), at -v 2 each shows, and
warnings always do."""

import json
import logging
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from dedup.commands import PER_RECORD_LOGGER, progress_bar

pytestmark = pytest.mark.django_db


def variants_file(tmp_path):
    path = tmp_path / "variants.jsonl"
    lines = [
        {
            "id": f"r{n}",
            "document": f"The nightly backup of server {n % 3} finished at two{'.' * (n % 2)}",
            "metadata": {"wing": "w", "room": "r"},
        }
        for n in range(6)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def stored_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == PER_RECORD_LOGGER]


def test_an_import_logs_no_line_a_record_by_default(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    call_command("import_memories", str(variants_file(tmp_path)), format="mempalace")
    assert stored_lines(caplog) == []


def test_verbosity_two_logs_each_linked_drawer(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    call_command("import_memories", str(variants_file(tmp_path)), format="mempalace", verbosity=2)
    assert any("similar_to" in line for line in stored_lines(caplog))


def test_warnings_show_and_the_level_comes_back(caplog):
    caplog.set_level(logging.INFO)
    logger = logging.getLogger(PER_RECORD_LOGGER)
    before = logger.level
    with progress_bar(1, hidden=True):
        logger.info("a record")
        logger.warning("a warning")
    assert stored_lines(caplog) == ["a warning"]
    assert logger.level == before


FIXTURES = Path(__file__).resolve().parent / "imports" / "fixtures"


def bar_of(capsys) -> str:
    """The progress bar's last state, as written to stderr."""
    return capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]


def test_an_import_s_progress_counts_records_out_of_the_file_s(capsys):
    """The operator's trial: "importing: 0record [00:00, ?record/s]", no total. The records of
    a JSON-lines file are its lines, counted before the import: malformed ones too (7 here: 4
    drawers, 3 malformed)."""
    call_command("import_memories", str(FIXTURES / "mempalace"), format="mempalace")
    bar = bar_of(capsys)
    assert bar.startswith("importing: 100%")
    assert " 7/7 [" in bar
    assert " records/s]" in bar


def test_a_mem0_document_s_progress_counts_records_without_a_total(capsys):
    """A mem0 export is one JSON document: its records are known only once it is parsed."""
    call_command("import_memories", str(FIXTURES / "mem0.json"), format="mem0")
    bar = bar_of(capsys)
    assert re.match(r"importing: \d+ records \[", bar), bar
