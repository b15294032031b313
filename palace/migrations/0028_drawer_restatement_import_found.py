"""What an import's reversal must not remove: the drawers a later write stated again
(`DrawerRestatement`) and those a later import found already stored (`Import.found`). Two new
tables, no row rewritten."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("palace", "0027_checkpoint_key_per_user"),
    ]

    operations = [
        migrations.CreateModel(
            name="DrawerRestatement",
            fields=[
                (
                    "drawer",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="restatement",
                        serialize=False,
                        to="palace.drawer",
                    ),
                ),
                (
                    "first_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
            ],
        ),
        migrations.AddField(
            model_name="import",
            name="found",
            field=models.ManyToManyField(
                blank=True, related_name="found_by_imports", to="palace.drawer"
            ),
        ),
    ]
