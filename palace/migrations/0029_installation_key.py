"""The installation's key for derived drawer ids (`palace.models.InstallationKey`,
`dedup.derived_ids`), made here so that it exists before any write needs it: an import's, a mining
run's or a checkpoint's drawer ids are derived from it. Reversed, the table goes (the ids already
written stay as they are)."""

import secrets

import django.utils.timezone
from django.db import migrations, models


def make_key(apps, schema_editor):
    key = apps.get_model("palace", "InstallationKey")
    # `dedup.derived_ids.DRAWER_IDS`; 32 random bytes, as hex.
    key.objects.get_or_create(purpose="drawer-ids", defaults={"value": secrets.token_hex(32)})


class Migration(migrations.Migration):
    dependencies = [
        ("palace", "0028_drawer_restatement_import_found"),
    ]

    operations = [
        migrations.CreateModel(
            name="InstallationKey",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("purpose", models.CharField(max_length=50, unique=True)),
                ("value", models.CharField(editable=False, max_length=128)),
                (
                    "created_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
            ],
        ),
        migrations.RunPython(make_key, migrations.RunPython.noop),
    ]
