"""Data migration: fill fingerprints and entity keys of rows written before they existed.

It merges nothing and running it twice changes nothing. The reverse is a no-op: the derived
columns are harmless to keep.
"""

from django.db import migrations


def forward(apps, schema_editor):
    from dedup.backfill import backfill_entity_keys, backfill_fingerprints

    backfill_fingerprints(apps.get_model("palace", "Drawer"))
    backfill_entity_keys(
        apps.get_model("palace", "Entity"), apps.get_model("palace", "EntityAlias")
    )


class Migration(migrations.Migration):
    dependencies = [("palace", "0002_drawer_fulltext")]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop, elidable=False)]
