"""The review queue filtered by rule: an index per link table that serves the filter's page and
its capped count alone (at 1,000,000 open items a count of a verdict read every open link's row
through the status index instead)."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("palace", "0013_drawer_fulltext_room_postgresql"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name="drawerlink",
            index=models.Index(
                fields=["status", "verdict", "-similarity", "-id"], name="drawer_link_queue_rule"
            ),
        ),
        migrations.AddIndex(
            model_name="entitylink",
            index=models.Index(
                fields=["status", "distance", "-similarity", "-id"], name="entity_link_queue_rule"
            ),
        ),
    ]
