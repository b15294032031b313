"""Background work through Django's tasks API (django-tasks, database backend): run the worker
with `manage.py db_worker`, on as many machines as the database serves."""

from django_tasks import task

from review.models import SweepRun
from review.services import sweeps


@task()
def run_sweep(run_id: int) -> dict:
    run = sweeps.execute(SweepRun.objects.get(pk=run_id))
    return run.counts
