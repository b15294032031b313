"""Background imports through Django's tasks API (django-tasks; `manage.py db_worker` runs them).

An import sent over the API carries its file in the `Import` row (so any worker can read it); it
is written to a temporary file for the readers and dropped from the row once read."""

import logging
import tempfile
from pathlib import Path

from django_tasks import task

from dedup import imports
from palace.models import Import

SUFFIXES: dict[str, str] = {Import.Format.MEM0: ".json"}
logger = logging.getLogger("castellan.imports")


@task()
def run_import(import_id: int) -> dict:
    imported = Import.objects.get(pk=import_id)
    # Named in the worker's log, whose own lines name only the task's id.
    logger.info("import %s: started (%s, %s)", import_id, imported.format, imported.source)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"upload{SUFFIXES.get(imported.format, '.jsonl')}"
        path.write_text(imported.upload, encoding="utf-8")
        Import.objects.filter(pk=import_id).update(upload="")
        summary = imports.import_run(imported, path=path).summary()
    logger.info("import %s: ended: %s", import_id, summary)
    return summary
