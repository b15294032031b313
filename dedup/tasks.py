"""Background imports through Django's tasks API (django-tasks; `manage.py db_worker` runs them).

An import sent over the API carries its file in the `Import` row (so any worker can read it); it
is written to a temporary file for the readers and dropped from the row once read."""

import tempfile
from pathlib import Path

from django_tasks import task

from dedup import imports
from palace.models import Import

SUFFIXES: dict[str, str] = {Import.Format.MEM0: ".json"}


@task()
def run_import(import_id: int) -> dict:
    imported = Import.objects.get(pk=import_id)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"upload{SUFFIXES.get(imported.format, '.jsonl')}"
        path.write_text(imported.upload, encoding="utf-8")
        Import.objects.filter(pk=import_id).update(upload="")
        return imports.import_run(imported, path=path).summary()
