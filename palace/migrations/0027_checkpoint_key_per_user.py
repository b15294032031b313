"""A checkpoint id is its caller's own: unique per user, no longer across the store. Reversed,
the ids must be unique again: refused, naming one, while two users hold the same one."""

from django.conf import settings
from django.db import migrations, models
from django.db.models import Count


def refuse_shared_ids(apps, schema_editor):
    checkpoint = apps.get_model("palace", "Checkpoint")
    shared = (
        checkpoint.objects.values("key")
        .annotate(users=Count("pk"))
        .filter(users__gt=1)
        .order_by("key")
        .first()
    )
    if shared is not None:
        raise RuntimeError(
            f"Checkpoint id {shared['key']!r} is held by {shared['users']} checkpoints of "
            "different users: ids cannot be unique across the store again until all but one "
            "are deleted."
        )


class Migration(migrations.Migration):
    dependencies = [
        ("palace", "0026_audit_alias_remove_room_delete"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="checkpoint",
            name="key",
            field=models.CharField(max_length=200),
        ),
        migrations.AddConstraint(
            model_name="checkpoint",
            constraint=models.UniqueConstraint(
                condition=models.Q(("created_by__isnull", False)),
                fields=("created_by", "key"),
                name="checkpoint_unique_key_per_user",
            ),
        ),
        # Last, so that reversed it runs first: a clear refusal, not a failed unique index.
        migrations.RunPython(migrations.RunPython.noop, refuse_shared_ids),
    ]
