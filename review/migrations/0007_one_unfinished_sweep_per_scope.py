from django.db import migrations, models
from django.utils import timezone

UNFINISHED = ["queued", "running"]


def fail_later_twins(apps, schema_editor):
    """Before the constraint: of unfinished runs of one scope (started twice), one is kept, a
    running one before a queued one and then the first, and each other is marked failed (its
    unfinished parts too), saying which run it repeated. An entity sweep covers every entity:
    the wing or room it was given is dropped, as `sweeps.start` now does."""
    SweepRun = apps.get_model("review", "SweepRun")
    SweepPart = apps.get_model("review", "SweepPart")
    SweepRun.objects.filter(entities=True).update(wing="", room="")
    scopes: dict[tuple, list] = {}
    for run in SweepRun.objects.filter(status__in=UNFINISHED).order_by("pk"):
        scopes.setdefault((run.wing, run.room, run.entities), []).append(run)
    for twins in scopes.values():
        kept = max(twins, key=lambda run: (run.status == "running", -run.pk))
        for run in twins:
            if run.pk == kept.pk:
                continue
            run.status = "failed"
            run.error = f"Started while sweep {kept.pk} of the same scope was unfinished."
            run.finished_at = timezone.now()
            run.save(update_fields=["status", "error", "finished_at"])
            unfinished = SweepPart.objects.filter(run=run).exclude(status="done")
            unfinished.update(status="failed", error=run.error)


class Migration(migrations.Migration):
    dependencies = [("review", "0006_sweep_parts")]

    operations = [
        migrations.RunPython(fail_later_twins, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="sweeprun",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status__in", UNFINISHED)),
                fields=("wing", "room", "entities"),
                name="one_unfinished_sweep_per_scope",
            ),
        ),
    ]
