from django.conf import settings
from django.db import migrations, models

UNFINISHED = ["queued", "running"]


def fail_later_twins(apps, schema_editor):
    """Before the constraint: of unfinished runs of one scope (started twice), the first is
    kept and each later one is marked failed, saying which run it repeated."""
    SweepRun = apps.get_model("review", "SweepRun")
    kept: dict[tuple, int] = {}
    for run in SweepRun.objects.filter(status__in=UNFINISHED).order_by("pk"):
        scope = (run.wing, run.room, run.entities)
        if scope not in kept:
            kept[scope] = run.pk
            continue
        run.status = "failed"
        run.error = f"Started while sweep {kept[scope]} of the same scope was unfinished."
        run.save(update_fields=["status", "error"])


class Migration(migrations.Migration):
    dependencies = [
        ("review", "0006_sweep_parts"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

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
