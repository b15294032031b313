"""Background imports through Django's tasks API (django-tasks; `manage.py db_worker` runs them)."""

from pathlib import Path

from django_tasks import task

from dedup import imports
from palace.models import Import


@task()
def run_import(import_id: int, path: str) -> dict:
    imported = Import.objects.get(pk=import_id)
    return imports.import_run(imported, path=Path(path)).summary()
