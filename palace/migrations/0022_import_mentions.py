"""Imports record the mentions a Castellan file's lines made, so that a reversal tells them from
later work by that, not by the import's end (an import that did not finish has none). An import
made before this records none: it is marked, and its reversal judges its mentions by time as
before (or keeps every mentioned drawer, if it did not finish)."""

from django.db import migrations, models


def mark_unrecorded(apps, schema_editor):
    Import = apps.get_model("palace", "Import")
    for imported in Import.objects.filter(format="castellan").only("options"):
        imported.options = {**(imported.options or {}), "mentions_unrecorded": True}
        imported.save(update_fields=["options"])


class Migration(migrations.Migration):
    dependencies = [
        ("palace", "0021_audit_redirected_entity"),
    ]

    operations = [
        migrations.AddField(
            model_name="import",
            name="mentions",
            field=models.ManyToManyField(blank=True, related_name="imports", to="palace.mention"),
        ),
        migrations.RunPython(mark_unrecorded, migrations.RunPython.noop, elidable=True),
    ]
